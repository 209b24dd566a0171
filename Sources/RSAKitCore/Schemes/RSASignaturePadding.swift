/// How a PSS salt length is chosen (RFC 8017 §9.1: sLen), with OpenSSL's names.
public enum RSAPSSSaltLength: Sendable, Hashable, CustomStringConvertible {
    /// sLen = hLen (`rsa_pss_saltlen:digest`, the RFC 8017 recommendation and rsakit's default).
    case digestLength
    /// sLen = emLen - hLen - 2, the longest that fits (`rsa_pss_saltlen:max`).
    case maximum
    /// Exactly this many octets (`rsa_pss_saltlen:N`), 0 ... emLen - hLen - 2.
    case byteCount(Int)
    /// Verification only: accept whatever salt length the signer used, recovered from the
    /// encoded message (`rsa_pss_saltlen:auto`). When signing it means ``maximum``, as in OpenSSL.
    case auto

    /// "digest", "max", "auto" or the number, as the CLI spells them.
    public var description: String {
        switch self {
        case .digestLength: return "digest"
        case .maximum: return "max"
        case let .byteCount(n): return String(n)
        case .auto: return "auto"
        }
    }

    /// sLen for signing: hLen, emLen - hLen - 2, or the number.
    internal func signingValue(digestByteCount hLen: Int, encodedBitCount emBits: Int) -> Int {
        switch self {
        case .digestLength: return hLen
        case .maximum, .auto: return EMSAPSS.maximumSaltLength(encodedBitCount: emBits, digestByteCount: hLen)
        case let .byteCount(n): return n
        }
    }

    /// sLen for verification, nil for "any" (auto).
    internal func verifyingValue(digestByteCount hLen: Int, encodedBitCount emBits: Int) -> Int? {
        self == .auto ? nil : signingValue(digestByteCount: hLen, encodedBitCount: emBits)
    }
}

/// The signature scheme (RFC 8017 §8): SecKeyCreateSignature's
/// `kSecKeyAlgorithmRSASignatureMessagePKCS1v15SHA*` and `...PSSSHA*`.
public enum RSASignaturePadding: Sendable, Hashable, CustomStringConvertible {
    /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2) with the DigestInfo of the signature hash.
    case pkcs1v15
    /// RSASSA-PSS (RFC 8017 §8.1) with MGF1 over the signature hash (what OpenSSL, Java's
    /// `RSASSA-PSS` with a matching MGF1 spec and Apple's `PSSSHA*` algorithms do).
    case pss(saltLength: RSAPSSSaltLength)
    /// RSASSA-PSS with MGF1 over another hash (for example SHA-256 signatures with MGF1-SHA-1,
    /// `rsa_mgf1_md:sha1`).
    case pssMGF1(RSAHashAlgorithm, saltLength: RSAPSSSaltLength)

    /// "PKCS#1 v1.5", "PSS (salt digest)", "PSS (MGF1-SHA-1, salt 20)".
    public var description: String {
        switch self {
        case .pkcs1v15: return "PKCS#1 v1.5"
        case let .pss(saltLength): return "PSS (salt \(saltLength))"
        case let .pssMGF1(mgf1, saltLength): return "PSS (MGF1-\(mgf1.displayName), salt \(saltLength))"
        }
    }
}
