// A private key as a GnuTLS "external" key (`gnutls_privkey_import_ext4`): GnuTLS never holds
// the key; every signature it needs is asked of RSAKit through a callback. The one place that
// hands rsakit's signers to GnuTLS: the TLS client's certificate key, and the certificate
// builder's placeholder key (GnuTLSCertificateBuilder.swift), which differ only in what they
// offer and answer. The TLS client's key offers RSA signatures only; for an rsaEncryption key:
//   GNUTLS_SIGN_RSA_RAW                  RSASSA-PKCS1-v1_5 over the DER DigestInfo T that
//                                        GnuTLS built (RFC 8017 §9.2 steps 1-2 done by it)
//   GNUTLS_SIGN_RSA_PSS_RSAE_SHA256/384/512  RSASSA-PSS over the bare hash, MGF1 with the
//                                        same hash, salt = hash length (RFC 8446 §4.2.3)
// and for an id-RSASSA-PSS key (GNUTLS_PK_RSA_PSS), only what its parameters allow of
//   GNUTLS_SIGN_RSA_PSS_SHA256/384/512   rsa_pss_pss_*: the same signature, an RSA-PSS certificate
import RSAKitCore
internal import CGnuTLS

/// A signature GnuTLS asks the external client key for.
package enum GnuTLSSignatureRequest {
    /// GNUTLS_SIGN_RSA_RAW: RSASSA-PKCS1-v1_5 over T, the DER DigestInfo (TLS 1.2's
    /// rsa_pkcs1_sha256/384/512 CertificateVerify).
    case pkcs1v15DigestInfo([UInt8])
    /// GNUTLS_SIGN_RSA_PSS_RSAE_SHA256/384/512: RSASSA-PSS over Hash(M), `digest` exactly
    /// `hash.digestByteCount` bytes (TLS 1.3, and TLS 1.2 servers that offer it).
    case pssRSAE(hash: RSAHashAlgorithm, digest: [UInt8])
    /// GNUTLS_SIGN_RSA_PSS_SHA256/384/512: the same signature by an id-RSASSA-PSS key
    /// (TLS's rsa_pss_pss_*, RFC 8446 §4.2.3).
    case pssPSS(hash: RSAHashAlgorithm, digest: [UInt8])

    /// The TLS SignatureScheme name (RFC 8446 §4.2.3), or for PKCS#1 v1.5 the DigestInfo's
    /// hash when recognisable ("rsa_pkcs1 (DigestInfo, 51 bytes)").
    package var schemeName: String {
        switch self {
        case let .pkcs1v15DigestInfo(info): return "rsa_pkcs1 (DigestInfo, \(info.count) bytes)"
        case let .pssRSAE(hash, _): return "rsa_pss_rsae_\(hash.rawValue)"
        case let .pssPSS(hash, _): return "rsa_pss_pss_\(hash.rawValue)"
        }
    }
}

/// The answering side of an external key: the modulus size GnuTLS must know, what the key
/// offers, and the signer. The signer runs inside the GnuTLS call that signs (the handshake,
/// or a document's signing), on the same thread.
package final class GnuTLSExternalKey {
    /// Thrown by an ``answer`` for a request it does not serve: GnuTLS gets
    /// GNUTLS_E_UNSUPPORTED_SIGNATURE_ALGORITHM, and ``lastError`` the reason when there is one.
    struct Unsupported: Error {
        let reason: Error?
    }

    /// The modulus length in bits (GNUTLS_PRIVKEY_INFO_PK_ALGO_BITS; RSA-PSS needs it).
    let modulusBitCount: Int
    /// What the key says it is (GNUTLS_PRIVKEY_INFO_PK_ALGO): GNUTLS_PK_RSA_PSS or GNUTLS_PK_RSA.
    let reportsRSAPSS: Bool
    /// Whether GnuTLS may use `algorithm` with this key (GNUTLS_PRIVKEY_INFO_HAVE_SIGN_ALGO).
    let offers: (gnutls_sign_algorithm_t) -> Bool
    /// The signature GnuTLS asks for with `algorithm` over `input` (a DigestInfo or a hash, as
    /// GnuTLS built it); throws ``Unsupported`` for what it does not serve, or why it failed.
    let answer: (_ algorithm: gnutls_sign_algorithm_t, _ input: [UInt8]) throws -> [UInt8]
    /// The last error the signer threw (GnuTLS only sees a failure code).
    var lastError: Error?

    /// The TLS client's key: offers what ``tlsOffers(_:pssRestriction:modulusBitCount:)`` lists, and
    /// `sign` makes each signature, exactly k bytes, or throws (GnuTLS gets
    /// GNUTLS_E_PK_SIGN_FAILED, and ``lastError`` the error).
    package convenience init(
        modulusBitCount: Int, pssRestriction: RSAPSSKeyRestriction? = nil,
        sign: @escaping (GnuTLSSignatureRequest) throws -> [UInt8]
    ) {
        self.init(
            modulusBitCount: modulusBitCount, reportsRSAPSS: pssRestriction != nil,
            offers: {
                GnuTLSExternalKey.tlsOffers($0, pssRestriction: pssRestriction, modulusBitCount: modulusBitCount)
            },
            answer: { algorithm, input in
                guard let request = GnuTLSExternalKey.request(algorithm: algorithm, input: input) else {
                    throw Unsupported(reason: nil)
                }
                return try sign(request)
            })
    }

    /// A key with its own policy: what it reports, what it offers, how it answers.
    init(
        modulusBitCount: Int, reportsRSAPSS: Bool, offers: @escaping (gnutls_sign_algorithm_t) -> Bool,
        answer: @escaping (_ algorithm: gnutls_sign_algorithm_t, _ input: [UInt8]) throws -> [UInt8]
    ) {
        self.modulusBitCount = modulusBitCount
        self.reportsRSAPSS = reportsRSAPSS
        self.offers = offers
        self.answer = answer
    }

    /// The request GnuTLS's `algorithm` and `input` stand for; nil for what is not offered.
    static func request(algorithm: gnutls_sign_algorithm_t, input: [UInt8]) -> GnuTLSSignatureRequest? {
        switch algorithm {
        case GNUTLS_SIGN_RSA_RAW: return .pkcs1v15DigestInfo(input)
        case GNUTLS_SIGN_RSA_PSS_RSAE_SHA256: return .pssRSAE(hash: .sha256, digest: input)
        case GNUTLS_SIGN_RSA_PSS_RSAE_SHA384: return .pssRSAE(hash: .sha384, digest: input)
        case GNUTLS_SIGN_RSA_PSS_RSAE_SHA512: return .pssRSAE(hash: .sha512, digest: input)
        case GNUTLS_SIGN_RSA_PSS_SHA256: return .pssPSS(hash: .sha256, digest: input)
        case GNUTLS_SIGN_RSA_PSS_SHA384: return .pssPSS(hash: .sha384, digest: input)
        case GNUTLS_SIGN_RSA_PSS_SHA512: return .pssPSS(hash: .sha512, digest: input)
        default: return nil
        }
    }

    /// Whether GnuTLS may negotiate `algorithm` with the TLS client's key:
    /// rsa_pkcs1_sha256/384/512 (signed through RSA_RAW) and rsa_pss_rsae_sha256/384/512.
    /// SHA-1 and SHA-224 are not offered; nor RSA-PSS-PSS (the key is an rsaEncryption key).
    /// An id-RSASSA-PSS key offers rsa_pss_pss_sha256/384/512 only, those its parameters
    /// allow with salt = hash length.
    static func tlsOffers(
        _ algorithm: gnutls_sign_algorithm_t, pssRestriction: RSAPSSKeyRestriction?, modulusBitCount: Int
    ) -> Bool {
        if let pssRestriction {
            let hash: RSAHashAlgorithm
            switch algorithm {
            case GNUTLS_SIGN_RSA_PSS_SHA256: hash = .sha256
            case GNUTLS_SIGN_RSA_PSS_SHA384: hash = .sha384
            case GNUTLS_SIGN_RSA_PSS_SHA512: hash = .sha512
            default: return false
            }
            return
                (try? pssRestriction.check(
                    hash: hash, padding: .pss(saltLength: .digestLength),
                    encodedBitCount: modulusBitCount - 1, verifying: false)) != nil
        }
        switch algorithm {
        case GNUTLS_SIGN_RSA_SHA256, GNUTLS_SIGN_RSA_SHA384, GNUTLS_SIGN_RSA_SHA512,
            GNUTLS_SIGN_RSA_PSS_RSAE_SHA256, GNUTLS_SIGN_RSA_PSS_RSAE_SHA384, GNUTLS_SIGN_RSA_PSS_RSAE_SHA512,
            GNUTLS_SIGN_RSA_RAW:
            return true
        default:
            return false
        }
    }

    /// A `gnutls_privkey_t` whose operations call this object (kept alive by GnuTLS until
    /// the privkey is deinitialised, which calls the deinit callback and releases it).
    /// The caller owns the returned privkey (or hands it to `gnutls_certificate_set_key`).
    func makePrivateKey() throws -> gnutls_privkey_t {
        var handle: gnutls_privkey_t?
        try gnutlsCheck(gnutls_privkey_init(&handle), "gnutls_privkey_init")
        guard let handle else { throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_privkey_init") }
        let userdata = Unmanaged.passRetained(self).toOpaque()
        let code = gnutls_privkey_import_ext4(
            handle, userdata,
            nil,
            { _, algorithm, userdata, _, input, signature -> Int32 in
                guard let userdata, let input, let signature else { return GNUTLS_E_INVALID_REQUEST }
                let key = Unmanaged<GnuTLSExternalKey>.fromOpaque(userdata).takeUnretainedValue()
                let bytes =
                    input.pointee.data.map { Array(UnsafeBufferPointer(start: $0, count: Int(input.pointee.size))) }
                    ?? []
                do {
                    let result = try key.answer(algorithm, bytes)
                    return result.withUnsafeBufferPointer {
                        rsakit_gnutls_set_datum(signature, $0.baseAddress, UInt32($0.count))
                    }
                } catch let unsupported as Unsupported {
                    if let reason = unsupported.reason { key.lastError = reason }
                    return GNUTLS_E_UNSUPPORTED_SIGNATURE_ALGORITHM
                } catch {
                    key.lastError = error
                    return GNUTLS_E_PK_SIGN_FAILED
                }
            },
            nil,
            { _, userdata in
                if let userdata { Unmanaged<GnuTLSExternalKey>.fromOpaque(userdata).release() }
            },
            { _, flags, userdata -> Int32 in
                guard let userdata else { return GNUTLS_E_INVALID_REQUEST }
                let key = Unmanaged<GnuTLSExternalKey>.fromOpaque(userdata).takeUnretainedValue()
                if flags & UInt32(GNUTLS_PRIVKEY_INFO_HAVE_SIGN_ALGO) != 0 {
                    let algorithm = gnutls_sign_algorithm_t(rawValue: rsakit_gnutls_flags_to_sign_algo(flags))
                    return key.offers(algorithm) ? 1 : 0
                }
                if flags & UInt32(GNUTLS_PRIVKEY_INFO_PK_ALGO) != 0 {
                    return Int32((key.reportsRSAPSS ? GNUTLS_PK_RSA_PSS : GNUTLS_PK_RSA).rawValue)
                }
                if flags & UInt32(GNUTLS_PRIVKEY_INFO_PK_ALGO_BITS) != 0 { return Int32(key.modulusBitCount) }
                if flags & UInt32(GNUTLS_PRIVKEY_INFO_SIGN_ALGO) != 0 { return 0 }
                return GNUTLS_E_INVALID_REQUEST
            },
            0)
        if code < 0 {
            // The deinit callback was not installed: release what was retained for it.
            Unmanaged<GnuTLSExternalKey>.fromOpaque(userdata).release()
            gnutls_privkey_deinit(handle)
            throw GnuTLSFailure(code: code, function: "gnutls_privkey_import_ext4")
        }
        return handle
    }
}
