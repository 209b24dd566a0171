/// The parameters of RSAES-OAEP (RFC 8017 §7.1, the `RSAES-OAEP-params` of A.2.1): the
/// label hash, the MGF1 hash and the label L.
///
/// Both sides must use the same three values, or decryption fails with the one opaque
/// `RSAError.decryptionFailed`. The usual mismatch: Java's
/// `RSA/ECB/OAEPWithSHA-256AndMGF1Padding` is OAEP SHA-256 with **MGF1-SHA-1**
/// (`RSAOAEPParameters(hash: .sha256, mgf1Hash: .sha1)`), whereas OpenSSL's
/// `rsa_oaep_md:sha256` alone gives MGF1-SHA-256 (`RSAOAEPParameters(hash: .sha256)`).
public struct RSAOAEPParameters: Sendable, Hashable, CustomStringConvertible {
    /// Hash of the label (lHash) and the length hLen of the seed.
    public var hash: RSAHashAlgorithm
    /// The hash inside MGF1 (RFC 8017 B.2.1).
    public var mgf1Hash: RSAHashAlgorithm
    /// The label L (an empty label is the default everywhere: OpenSSL, Java, Apple).
    public var label: [UInt8]

    /// - Parameters:
    ///   - hash: the OAEP hash (default SHA-256).
    ///   - mgf1Hash: the MGF1 hash; nil (the default) means the same as `hash`.
    ///   - label: L, any length (default empty).
    public init(hash: RSAHashAlgorithm = .sha256, mgf1Hash: RSAHashAlgorithm? = nil, label: [UInt8] = []) {
        self.hash = hash
        self.mgf1Hash = mgf1Hash ?? hash
        self.label = label
    }

    /// 2 hLen + 2: the octets of EM that OAEP spends on itself.
    public var overheadByteCount: Int { 2 * hash.digestByteCount + 2 }

    /// "OAEP SHA-256, MGF1-SHA-1, label of 3 bytes" (never prints the label itself).
    public var description: String {
        "OAEP \(hash.displayName), MGF1-\(mgf1Hash.displayName), "
            + (label.isEmpty ? "empty label" : "label of \(label.count) bytes")
    }
}
