// Foundation form of the one store lookup that takes bytes.
import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSAKeyStore {
    /// The certificate whose DER has this SHA-256 fingerprint, given as 32 bytes in `Data`
    /// (or any `DataProtocol`); see ``certificate(fingerprint:)-([UInt8])``.
    /// - Throws: every error of the `[UInt8]` form (no such certificate; the store's read errors).
    public func certificate(fingerprint: some DataProtocol) throws -> RSACertificateAttributes {
        try certificate(fingerprint: [UInt8](fingerprint))
    }
}

extension RSAKeyStore {
    /// `importIdentity(pkcs12:passphrase:tag:label:replace:)` with the
    /// file and the passphrase held in `Data` (as `Data(contentsOf:)` reads a `.p12`). RSAKit's
    /// copy of the passphrase is wiped.
    /// - Returns: the identity as stored, and the file's contents.
    /// - Throws: every error of the `[UInt8]` form.
    @discardableResult
    public func importIdentity(
        pkcs12: Data, passphrase: Data, tag: String? = nil, label: String? = nil,
        replace: Bool = false
    ) throws -> (identity: RSAIdentityItem, contents: RSAPKCS12) {
        var secret = [UInt8](passphrase)
        defer { wipe(&secret) }
        return try importIdentity(pkcs12: [UInt8](pkcs12), passphrase: secret, tag: tag, label: label, replace: replace)
    }

    /// The async form of `importIdentity(pkcs12:passphrase:tag:label:replace:)`,
    /// in RSAKit's bounded pool.
    /// - Returns: the identity as stored, and the file's contents.
    /// - Throws: `CancellationError` when cancelled before the import started; every error of
    ///   the synchronous form.
    @discardableResult
    public func importIdentityAsync(
        pkcs12: Data, passphrase: Data, tag: String? = nil, label: String? = nil,
        replace: Bool = false
    ) async throws -> (identity: RSAIdentityItem, contents: RSAPKCS12) {
        var secret = [UInt8](passphrase)
        defer { wipe(&secret) }
        return try await importIdentityAsync(
            pkcs12: [UInt8](pkcs12), passphrase: secret, tag: tag, label: label, replace: replace)
    }
}
