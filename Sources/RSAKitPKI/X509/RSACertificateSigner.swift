// The private key that signs a certificate request or a self-signed certificate, wherever it
// lives: in this process (RSAPrivateKey), on a PKCS#11 token or in a TPM reached through one.
// The builders see only a public key and a function from the to-be-signed bytes to a
// signature, so this layer needs no key store and no token code. The function gets the
// message, not a digest: a TPM key signs PKCS#1 v1.5 only over a message it hashes itself.
import RSAKitCore

/// The signature a certificate request or certificate carries (its signatureAlgorithm,
/// RFC 5280 §4.1.1.2; RFC 4055 for RSASSA-PSS).
public enum RSACertificateSignatureScheme: Sendable, Hashable, CustomStringConvertible {
    /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2) with `hash`: sha256WithRSAEncryption and kin.
    case pkcs1v15(RSAHashAlgorithm)
    /// RSASSA-PSS (RFC 8017 §8.1) with `hash`, MGF1 with the same hash and a salt as long as
    /// the hash (the parameters RFC 4055 §3.1 writes into the AlgorithmIdentifier).
    case pss(RSAHashAlgorithm)

    /// sha256WithRSAEncryption, what `openssl req` writes by default.
    public static let `default`: RSACertificateSignatureScheme = .pkcs1v15(.sha256)

    /// The hash: SHA-256, SHA-384 or SHA-512 are accepted by the builders.
    public var hash: RSAHashAlgorithm {
        switch self {
        case let .pkcs1v15(hash), let .pss(hash): return hash
        }
    }

    /// The padding handed to the signer (PSS: salt = hash length).
    public var padding: RSASignaturePadding {
        switch self {
        case .pkcs1v15: return .pkcs1v15
        case .pss: return .pss(saltLength: .digestLength)
        }
    }

    /// "sha256WithRSAEncryption", "RSASSA-PSS with SHA-384".
    public var description: String {
        switch self {
        case let .pkcs1v15(hash): return "\(hash.rawValue)WithRSAEncryption"
        case let .pss(hash): return "RSASSA-PSS with \(hash.displayName)"
        }
    }
}

/// A private key as the certificate builders use it: its public half, and a function that
/// signs a message with the private half (RSASSA-PKCS1-v1_5 or RSASSA-PSS, RFC 8017 §8).
///
/// The builders (``RSACertificateRequest/init(subject:alternativeNames:signer:scheme:)`` and
/// ``X509Certificate/selfSigned(subject:alternativeNames:validityDays:notValidBefore:isCertificateAuthority:signer:scheme:)``)
/// hand the signer one message per document (the DER certificationRequestInfo or
/// tbsCertificate), and check the signature it returns against ``publicKey`` before the
/// document leaves them, so a signer for another key is caught.
/// Constant-time status: that of the key's own implementation (rsakit's engine for
/// ``init(privateKey:)``; the token's for a token key).
public struct RSACertificateSigner: Sendable {
    /// The public key the request or certificate will carry (its SubjectPublicKeyInfo is
    /// rsaEncryption, RFC 8017 Appendix A.1).
    public let publicKey: RSAPublicKey
    /// Signs `message` with `hash` and `padding`; returns S, k bytes.
    private let sign:
        @Sendable (_ message: [UInt8], _ hash: RSAHashAlgorithm, _ padding: RSASignaturePadding) throws -> [UInt8]

    /// A signer from its parts: any key whose private operation is elsewhere (a token, a TPM,
    /// a remote service).
    ///
    /// - Parameters:
    ///   - publicKey: the key's public half.
    ///   - sign: RSASSA-PKCS1-V1_5-SIGN or RSASSA-PSS-SIGN of `message` (the DER to be
    ///     signed, hashed by the signer with `hash`; PSS comes as `.pss(saltLength: .digestLength)`);
    ///     returns S, k bytes. What it throws reaches the builder's caller unchanged.
    public init(
        publicKey: RSAPublicKey,
        sign:
            @escaping @Sendable (_ message: [UInt8], _ hash: RSAHashAlgorithm, _ padding: RSASignaturePadding) throws ->
            [UInt8]
    ) {
        self.publicKey = publicKey
        self.sign = sign
    }

    /// A key in this process: rsakit's own RSASP1 (CRT, blinded, constant-time, checked by
    /// re-encryption; ``RSAPrivateKey/signature(for:hash:padding:random:)-([UInt8],_,_,_)``).
    ///
    /// An id-RSASSA-PSS key (one with ``RSAPrivateKey/pssRestriction``) is accepted here but
    /// refused by the builders, whose SubjectPublicKeyInfo is rsaEncryption.
    public init(privateKey: RSAPrivateKey) {
        self.init(publicKey: privateKey.publicKey) { message, hash, padding in
            try privateKey.signature(for: message, hash: hash, padding: padding)
        }
        pssRestricted = privateKey.pssRestriction != nil
    }

    /// Whether the key is an id-RSASSA-PSS key (its certificate would need RSASSA-PSS
    /// SubjectPublicKeyInfo parameters, which the builders do not write).
    var pssRestricted = false

    /// S over `message`, checked against ``publicKey`` (RSAVP1 and the encoding, RFC 8017 §8).
    /// - Throws: what the signer throws; `RSAError.internalError` when the signature does not
    ///   verify with ``publicKey`` (the signer holds another key, or failed silently).
    func signature(for message: [UInt8], scheme: RSACertificateSignatureScheme) throws -> [UInt8] {
        let signature = try sign(message, scheme.hash, scheme.padding)
        guard publicKey.isValidSignature(signature, for: message, hash: scheme.hash, padding: scheme.padding) else {
            throw RSAError.internalError(
                "the signer's signature does not verify with its public key (is it the same key?)")
        }
        return signature
    }

    /// Refuse what the builders cannot make: hashes other than SHA-256/384/512, and
    /// id-RSASSA-PSS keys.
    /// - Throws: `RSAError.keyRestricted`.
    func checkUsable(with scheme: RSACertificateSignatureScheme) throws {
        guard [.sha256, .sha384, .sha512].contains(scheme.hash) else {
            throw RSAError.keyRestricted(
                reason:
                    "certificates and requests are signed with SHA-256, SHA-384 or SHA-512, not "
                    + "\(scheme.hash.displayName)"
            )
        }
        guard !pssRestricted else {
            throw RSAError.keyRestricted(
                reason:
                    "an RSASSA-PSS key (id-RSASSA-PSS) cannot sign a certificate request or certificate here: its "
                    + "public key would need RSASSA-PSS parameters; use an rsaEncryption key"
            )
        }
    }
}
