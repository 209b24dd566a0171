// The identity a TLS client authenticates with (Apple's SecIdentity handed to
// NSURLCredential credentialWithIdentity:): a certificate, the chain sent with it, and the
// private key that stays in RSAKit's engine.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A client certificate, its chain and its private key, for ``RSATLSConnection``.
///
/// The private key is used only through RSAKit's own private operation (RSASP1: CRT,
/// blinded, constant-time, result checked by re-encryption, RFC 8017 §5.2.1); GnuTLS gets
/// the certificate chain and a callback, never the key.
public struct RSATLSClientIdentity: Sendable {
    /// The private key.
    public let privateKey: RSAPrivateKey
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
    /// - Throws: `RSAError.tlsIdentityUnusable` when the certificate's public key is not
    ///   RSA or is not the private key's (compared by n and e).
    public init(privateKey: RSAPrivateKey, certificate: X509Certificate, chain: [X509Certificate] = [], name: String? = nil) throws {
        guard let publicKey = certificate.publicKey else {
            throw RSAError.tlsIdentityUnusable(reason: "the certificate \"\(certificate.subjectSummary)\" has no RSA public key")
        }
        guard publicKey == privateKey.publicKey else {
            throw RSAError.tlsIdentityUnusable(reason: "the certificate \"\(certificate.subjectSummary)\" is for another key than the private key")
        }
        self.privateKey = privateKey
        self.certificate = certificate
        self.chain = chain
        self.name = name ?? certificate.subjectSummary
    }

    /// The identity whose certificate has label `label` in `store` (Apple's
    /// `SecItemCopyMatching` with `kSecClassIdentity` and `kSecAttrLabel`), with the chain
    /// stored with it. When several certificates carry the label, the one valid now with
    /// the latest notAfter is taken.
    ///
    /// - Throws: `RSAError.itemNotFound` (class identity, `label`) when no certificate with
    ///   this label has a private key in the store (one item is asked for, so none is an
    ///   error; ``RSAKeyStore/identities(label:)`` returns `[]` instead);
    ///   `RSAError.keychainLocked` for a protected store not unlocked;
    ///   `RSAError.tlsIdentityUnusable`; the store's read errors.
    public init(store: RSAKeyStore, label: String) throws {
        let identities = try store.identities(label: label)
        guard let item = RSATLSClientIdentity.preferred(identities) else {
            throw RSAError.itemNotFound(RSAKeychainItemQuery(itemClass: .identity, label: label))
        }
        try self.init(store: store, item: item, name: label)
    }

    /// The identity of the private key stored under application tag `tag`: a certificate
    /// in the store for its public key (the newest valid one when there are several).
    ///
    /// - Throws: `RSAError.itemNotFound` (class identity, `applicationTag`) when no private
    ///   key has this tag or no certificate for it is stored; as ``init(store:label:)``.
    public init(store: RSAKeyStore, tag: String) throws {
        let identities = try store.identities(tag: tag)
        guard let item = RSATLSClientIdentity.preferred(identities) else {
            throw RSAError.itemNotFound(RSAKeychainItemQuery(itemClass: .identity, applicationTag: tag))
        }
        try self.init(store: store, item: item, name: tag)
    }

    private init(store: RSAKeyStore, item: RSAIdentityItem, name: String) throws {
        let key = try store.privateKey(tag: item.privateKey.applicationTag)
        let certificate = try store.certificate(itemID: item.certificate.itemID)
        let chain = try item.chain.map { try store.certificate(itemID: $0.itemID) }
        try self.init(privateKey: key, certificate: certificate, chain: chain, name: name)
    }

    /// The identity valid now with the latest notAfter, else the latest notAfter.
    private static func preferred(_ items: [RSAIdentityItem]) -> RSAIdentityItem? {
        let now = Date()
        let valid = items.filter { $0.certificate.notValidBefore <= now && now <= $0.certificate.notValidAfter }
        return (valid.isEmpty ? items : valid).max { $0.certificate.notValidAfter < $1.certificate.notValidAfter }
    }
}
