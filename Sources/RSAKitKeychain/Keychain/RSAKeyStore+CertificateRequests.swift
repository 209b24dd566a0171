// Certificate requests and self-signed certificates for a stored key, by tag: the key
// signs where it lives (rsakit's engine for a key in the store, C_Sign on the token for a
// token key, TPM2_Sign for a key in the TPM), through RSACertificateSigner.

import RSAKitCore
import RSAKitPKI

extension RSACertificateSigner {
    /// A key on a PKCS#11 token or in the TPM: each signature opens a session, logs in with
    /// `pin`, runs C_Sign (or TPM2_Sign, for a TPM key made with usage sign) and logs out
    /// (``RSATokenKey/signature(for:hash:padding:pin:)-([UInt8],_,_,_)``). The private key never
    /// enters this process. `pin` is kept as long as the signer.
    public init(tokenKey: RSATokenKey, pin: RSASecretBytes) {
        self.init(publicKey: tokenKey.publicKey) { message, hash, padding in
            try tokenKey.signature(for: message, hash: hash, padding: padding, pin: pin)
        }
    }
}

extension RSAKeyStore {
    /// The signer for the private key stored under `tag`: the key itself when the store holds
    /// it, else the token key it refers to.
    ///
    /// - Parameters:
    ///   - tag: the private key's application tag.
    ///   - tokenPIN: called with the token's reference, only for a key on a token; returns
    ///     the user PIN (checked when the signer first signs).
    /// - Throws: `RSAError.itemNotFound` (class private) when no private key has this tag;
    ///   `RSAError.keyOnToken` for a token key when `tokenPIN` is nil, and what `tokenPIN`
    ///   throws; `RSAError.keychainLocked` for a protected store not unlocked; the store's
    ///   read errors (``privateKey(tag:)``, ``tokenKey(tag:)``).
    public func certificateSigner(tag: String, tokenPIN: ((RSATokenReference) throws -> RSASecretBytes)? = nil) throws
        -> RSACertificateSigner
    {
        if let tokenKey = try tokenKey(tag: tag) {
            guard let tokenPIN else { throw RSAError.keyOnToken(tag: tag) }
            return RSACertificateSigner(tokenKey: tokenKey, pin: try tokenPIN(tokenKey.reference))
        }
        return RSACertificateSigner(privateKey: try privateKey(tag: tag))
    }

    /// A PKCS#10 request for the key under `tag`, signed where the key lives
    /// (``RSACertificateRequest/init(subject:alternativeNames:signer:scheme:)`` with
    /// ``certificateSigner(tag:tokenPIN:)``). Nothing in the store changes.
    ///
    /// - Parameters: `subject`, `alternativeNames`, `scheme` as the request's initialiser;
    ///   `tag` and `tokenPIN` as ``certificateSigner(tag:tokenPIN:)``.
    /// - Throws: what those two throw.
    public func certificateRequest(
        tag: String, subject: String, alternativeNames: [X509Certificate.SubjectAlternativeName] = [],
        scheme: RSACertificateSignatureScheme = .default,
        tokenPIN: ((RSATokenReference) throws -> RSASecretBytes)? = nil
    ) throws -> RSACertificateRequest {
        let signer = try certificateSigner(tag: tag, tokenPIN: tokenPIN)
        return try RSACertificateRequest(
            subject: subject, alternativeNames: alternativeNames, signer: signer, scheme: scheme)
    }

    /// A self-signed certificate for the key under `tag`
    /// (``X509Certificate/selfSigned(subject:alternativeNames:validityDays:notValidBefore:isCertificateAuthority:signer:scheme:)``
    /// with ``certificateSigner(tag:tokenPIN:)``). It is not stored: ``addCertificate(_:label:trust:chain:replace:)``
    /// keeps it, and the key becomes an identity.
    ///
    /// - Parameters: as the certificate builder, with `tag` and `tokenPIN` as
    ///   ``certificateSigner(tag:tokenPIN:)``.
    /// - Throws: what those two throw.
    public func selfSignedCertificate(
        tag: String, subject: String, alternativeNames: [X509Certificate.SubjectAlternativeName] = [],
        validityDays: Int, isCertificateAuthority: Bool = false,
        scheme: RSACertificateSignatureScheme = .default,
        tokenPIN: ((RSATokenReference) throws -> RSASecretBytes)? = nil
    ) throws -> X509Certificate {
        let signer = try certificateSigner(tag: tag, tokenPIN: tokenPIN)
        return try X509Certificate.selfSigned(
            subject: subject, alternativeNames: alternativeNames, validityDays: validityDays,
            isCertificateAuthority: isCertificateAuthority, signer: signer, scheme: scheme)
    }
}
