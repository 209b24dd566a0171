// The identity a TLS client authenticates with (Apple's SecIdentity handed to
// NSURLCredential credentialWithIdentity:): a certificate, the chain sent with it, and the
// private key that stays in RSAKit's engine.
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a TLS client identity's private key is, and what signs with it.
public enum RSATLSClientKey: Sendable {
    /// A key in this process: RSAKit's own private operation (RSASP1: CRT, blinded,
    /// constant-time, result checked by re-encryption, RFC 8017 §5.2.1).
    case stored(RSAPrivateKey)
    /// A key on a PKCS#11 token: the connection logs in with `pin` before the handshake and
    /// the signature is made by C_Sign on the token (CKM_RSA_PKCS over GnuTLS's DigestInfo,
    /// CKM_RSA_PKCS_PSS with salt = hash length); the private key never enters this process.
    /// Constant-time status: the token's. `pin` is kept (zeroed when the last reference
    /// goes, ``RSASecretBytes``) as long as the identity.
    case token(RSATokenKey, pin: RSASecretBytes)
    /// A key of the system keychain: the private key of tag `tag` in `accessGroup`, whose
    /// public half is `publicKey`, held by the system agent, which signs each handshake's
    /// digest if its rules allow this process's Unix user (``RSASystemKeychainClient``); the
    /// private key never enters this process. Constant-time status: the agent's RSAKit
    /// private operation (blinded, CRT, checked by re-encryption).
    case system(RSASystemKeychainClient, tag: String, accessGroup: String, publicKey: RSAPublicKey)

    /// The public half (the certificate's key must be this one).
    public var publicKey: RSAPublicKey {
        switch self {
        case let .stored(key): return key.publicKey
        case let .token(key, _): return key.publicKey
        case let .system(_, _, _, publicKey): return publicKey
        }
    }
}

/// A client certificate, its chain and its private key, for ``RSATLSConnection``.
///
/// The private key is used only through RSAKit's own private operation (RSASP1: CRT,
/// blinded, constant-time, result checked by re-encryption, RFC 8017 §5.2.1), or for a
/// token key through C_Sign on the token (``RSATLSClientKey/token(_:pin:)``); GnuTLS gets
/// the certificate chain and a callback, never the key.
public struct RSATLSClientIdentity: Sendable {
    /// The private key: in this process or on a token.
    public let key: RSATLSClientKey
    /// The private key when it is in this process; nil for a key on a token (``key``).
    public var privateKey: RSAPrivateKey? {
        if case let .stored(privateKey) = key { return privateKey }
        return nil
    }
    /// The client certificate (Certificate message, first entry; RFC 8446 §4.4.2).
    public let certificate: X509Certificate
    /// Issuer certificates sent after it, issuer first (the trust anchor may be left out).
    public let chain: [X509Certificate]
    /// A name for messages: the certificate label or the key tag the identity came from.
    public let name: String

    /// An identity from its parts.
    ///
    /// - Parameters:
    ///   - privateKey: the key whose public half is the certificate's.
    ///   - certificate: the client certificate.
    ///   - chain: issuers to send with it, issuer first.
    ///   - name: for messages (default: the certificate's subject summary).
    /// - Throws: `RSATLSError.identityUnusable` when the certificate's public key is not
    ///   RSA or is not the private key's (compared by n and e).
    public init(
        privateKey: RSAPrivateKey, certificate: X509Certificate, chain: [X509Certificate] = [], name: String? = nil
    ) throws {
        try self.init(key: .stored(privateKey), certificate: certificate, chain: chain, name: name)
    }

    /// An identity whose private key is `key` (in this process or on a token).
    ///
    /// - Parameters: as ``init(privateKey:certificate:chain:name:)``, with `key` in place
    ///   of the private key. No token is accessed here.
    /// - Throws: `RSATLSError.identityUnusable` when the certificate's public key is not
    ///   RSA or is not the key's (compared by n and e).
    public init(key: RSATLSClientKey, certificate: X509Certificate, chain: [X509Certificate] = [], name: String? = nil)
        throws
    {
        guard let publicKey = certificate.publicKey else {
            throw RSATLSError.identityUnusable(
                reason: "the certificate \"\(certificate.subjectSummary)\" has no RSA public key")
        }
        guard publicKey == key.publicKey else {
            throw RSATLSError.identityUnusable(
                reason: "the certificate \"\(certificate.subjectSummary)\" is for another key than the private key")
        }
        self.key = key
        self.certificate = certificate
        self.chain = chain
        self.name = name ?? certificate.subjectSummary
    }

    /// The identity whose certificate has label `label` in `store` (Apple's
    /// `SecItemCopyMatching` with `kSecClassIdentity` and `kSecAttrLabel`), with the chain
    /// stored with it. When several certificates carry the label, the one valid now with
    /// the latest notAfter is taken.
    ///
    /// - Parameters:
    ///   - store: the key store.
    ///   - label: the certificate's label.
    ///   - tokenPIN: called, with the token's reference, only when the private key is on a
    ///     PKCS#11 token (``RSAKeyStore/tokenKey(tag:)``); it returns the user PIN, checked
    ///     later, when the connection logs in. No token is accessed here.
    /// - Throws: `RSAError.keyOnToken` for a token key when `tokenPIN` is nil, and what
    ///   `tokenPIN` throws; `RSAError.itemNotFound` (class identity, `label`) when no certificate with
    ///   this label has a private key in the store (one item is asked for, so none is an
    ///   error; ``RSAKeyStore/identities(label:)`` returns `[]` instead);
    ///   `RSAError.keychainLocked` for a protected store not unlocked;
    ///   `RSATLSError.identityUnusable`; the store's read errors.
    public init(store: RSAKeyStore, label: String, tokenPIN: ((RSATokenReference) throws -> RSASecretBytes)? = nil)
        throws
    {
        let identities = try store.identities(label: label)
        guard let item = RSATLSClientIdentity.preferred(identities) else {
            throw RSAError.itemNotFound(RSAKeychainItemQuery(itemClass: .identity, label: label))
        }
        try self.init(store: store, item: item, name: label, tokenPIN: tokenPIN)
    }

    /// The identity of the private key stored under application tag `tag`: a certificate
    /// in the store for its public key (the newest valid one when there are several).
    ///
    /// - Parameters: `tag` the private key's application tag; `store` and `tokenPIN` as
    ///   ``init(store:label:tokenPIN:)``.
    /// - Throws: `RSAError.itemNotFound` (class identity, `applicationTag`) when no private
    ///   key has this tag or no certificate for it is stored; as ``init(store:label:tokenPIN:)``.
    public init(store: RSAKeyStore, tag: String, tokenPIN: ((RSATokenReference) throws -> RSASecretBytes)? = nil) throws
    {
        let identities = try store.identities(tag: tag)
        guard let item = RSATLSClientIdentity.preferred(identities) else {
            throw RSAError.itemNotFound(RSAKeychainItemQuery(itemClass: .identity, applicationTag: tag))
        }
        try self.init(store: store, item: item, name: tag, tokenPIN: tokenPIN)
    }

    private init(
        store: RSAKeyStore, item: RSAIdentityItem, name: String,
        tokenPIN: ((RSATokenReference) throws -> RSASecretBytes)?
    ) throws {
        let tag = item.privateKey.applicationTag
        let key: RSATLSClientKey
        if let tokenKey = try store.tokenKey(tag: tag) {
            guard let tokenPIN else { throw RSAError.keyOnToken(tag: tag) }
            key = .token(tokenKey, pin: try tokenPIN(tokenKey.reference))
        } else {
            key = .stored(try store.privateKey(tag: tag))
        }
        let certificate = try store.certificateValue(id: item.certificate.itemID)
        let chain = try item.chain.map { try store.certificateValue(id: $0.itemID) }
        try self.init(key: key, certificate: certificate, chain: chain, name: name)
    }

    /// The identity of a private key the system keychain's agent holds, found in what it
    /// allows this Unix user (``RSASystemKeychainClient/objects()``): the certificate labelled
    /// `label` whose key is such a private key, or the certificate for the private key of tag
    /// `tag` (the one valid now with the latest notAfter when several fit), with the issuers
    /// of the same group that follow it. Asks the agent once; no signature is made here.
    ///
    /// - Parameters:
    ///   - client: the system agent's client.
    ///   - label: the certificate's label; or nil, and then `tag`.
    ///   - tag: the private key's application tag (used when `label` is nil).
    ///   - accessGroup: look in this group only; nil: every group the agent allows.
    /// - Throws: `RSAError.itemNotFound` (class identity) when no allowed group holds such a
    ///   certificate and private key; `RSAError.storeAccessDenied` when the agent allows this
    ///   user no group; `RSAError.storeIOError` when no agent answers.
    public init(
        systemKeychain client: RSASystemKeychainClient, label: String? = nil, tag: String? = nil,
        accessGroup: String? = nil
    ) throws {
        let objects = try client.objects().filter { accessGroup == nil || $0.accessGroup == accessGroup }
        var certificates: [(certificate: X509Certificate, group: String, label: String)] = []
        var privateKeys: [(key: RSAPublicKey, group: String, tag: String)] = []
        for object in objects {
            switch object.kind {
            case let .certificate(certificate): certificates.append((certificate, object.accessGroup, object.label))
            case let .privateKey(key): privateKeys.append((key, object.accessGroup, object.tag))
            case .publicKey: break
            }
        }
        var candidates: [(certificate: X509Certificate, group: String, tag: String)] = []
        for stored in certificates where label == nil || stored.label == label {
            guard let key = stored.certificate.publicKey else { continue }
            for privateKey in privateKeys
            where privateKey.group == stored.group && privateKey.key == key
                && (label != nil || privateKey.tag == tag)
            {
                candidates.append((stored.certificate, stored.group, privateKey.tag))
            }
        }
        let now = Date()
        let valid = candidates.filter { $0.certificate.notValidBefore <= now && now <= $0.certificate.notValidAfter }
        guard
            let chosen = (valid.isEmpty ? candidates : valid).max(by: {
                $0.certificate.notValidAfter < $1.certificate.notValidAfter
            }),
            let publicKey = chosen.certificate.publicKey
        else {
            throw RSAError.itemNotFound(
                label.map { RSAKeychainItemQuery(itemClass: .identity, label: $0) }
                    ?? RSAKeychainItemQuery(itemClass: .identity, applicationTag: tag ?? ""))
        }
        // The issuers the group holds, leaf's issuer first, up to a self-signed one.
        var chain: [X509Certificate] = []
        var current = chosen.certificate
        while chain.count < 8, current.issuerDER != current.subjectDER,
            let issuer = certificates.first(where: {
                $0.group == chosen.group && $0.certificate.subjectDER == current.issuerDER
                    && $0.certificate.derRepresentation != current.derRepresentation
            })
        {
            chain.append(issuer.certificate)
            current = issuer.certificate
        }
        try self.init(
            key: .system(client, tag: chosen.tag, accessGroup: chosen.group, publicKey: publicKey),
            certificate: chosen.certificate, chain: chain, name: label ?? chosen.tag)
    }

    /// The identity valid now with the latest notAfter, else the latest notAfter.
    private static func preferred(_ items: [RSAIdentityItem]) -> RSAIdentityItem? {
        let now = Date()
        let valid = items.filter { $0.certificate.notValidBefore <= now && now <= $0.certificate.notValidAfter }
        return (valid.isEmpty ? items : valid).max { $0.certificate.notValidAfter < $1.certificate.notValidAfter }
    }
}
