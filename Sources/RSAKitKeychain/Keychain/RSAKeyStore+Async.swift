import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The async forms of the store's slow calls: opening a protected store (Argon2id at the
// store's cost), generating a key pair, importing a PKCS#12 file (its key derivation and
// MAC). They run in RSAKit's bounded pool (RSABlockingWork), off the cooperative pool, as
// RSAKitCore's RSAKeys+Async.swift does for keys.

extension RSAKeyStore {
    /// Open the store at `url` and, when it is protected and `passphrase` is given, unlock
    /// it, off the cooperative pool: the async form of ``init(path:createIfMissing:allowInsecurePermissions:)``
    /// followed by ``unlock(passphrase:)`` (Argon2id runs once, at the store's recorded cost).
    ///
    /// - Parameters:
    ///   - url: the store's folder (a file URL).
    ///   - passphrase: the store passphrase, or nil to leave a protected store locked.
    ///   - createIfMissing: create an empty store (0700) when the folder does not exist
    ///     (default true, as the synchronous initialisers; false makes a missing store an
    ///     error, `RSAError.storeNotFound`).
    /// - Returns: the open store, unlocked when protected and `passphrase` was given.
    /// - Throws: `CancellationError` when the task was cancelled before the store opened
    ///   (Argon2id itself is not interruptible: a cancellation during it is reported after
    ///   it, and the store is then not returned); `RSAError.storeNotFound`,
    ///   `.insecureStorePermissions`, `.storeIOError`, `.wrongPassphrase`, `.invalidKDFParameters`.
    public static func open(
        at url: URL, passphrase: RSASecretBytes? = nil,
        createIfMissing: Bool = true
    ) async throws -> RSAKeyStore {
        try await RSABlockingWork.run { flag in
            let store = try RSAKeyStore(path: url.path, createIfMissing: createIfMissing)
            if let passphrase {
                try flag.check()
                try store.unlock(passphrase: passphrase)
            }
            try flag.check()
            return store
        }
    }

    /// The async form of ``generateKeyPair(tag:privateTag:label:bitCount:publicExponent:replace:progress:)``
    /// (Apple's `SecKeyCreateRandomKey` with `kSecAttrIsPermanent`): generate a key pair
    /// (FIPS 186-5 A.1.3) and add both halves to the store, in RSAKit's bounded pool of threads
    /// (at most the processor count plus two, however many calls wait).
    ///
    /// Cancelling the awaiting task stops the prime search at its next candidate and stores
    /// nothing; once the key exists, the write runs to its end.
    /// - Parameters:
    ///   - tag: the public key's application tag; `privateTag` the private key's (default: `tag`).
    ///   - label: both items' label (default: none).
    ///   - bitCount: nlen, 1024 ... 16384 (default 2048).
    ///   - publicExponent: e (default 65537).
    ///   - replace: replace items already under the tags.
    /// - Returns: the key, and the two items' attributes as stored.
    /// - Throws: `CancellationError`; every error of the synchronous form (`RSAError.duplicateItem`
    ///   without `replace`, `.invalidTag`, `.invalidLabel`, `.keySizeUnsupported`,
    ///   `.keychainLocked`, `.storeIOError`).
    @discardableResult
    public func generateKeyPairAsync(
        tag: String, privateTag: String? = nil, label: String? = nil,
        bitCount: Int = 2048, publicExponent: UInt64 = 65537, replace: Bool = false
    ) async throws -> (key: RSAPrivateKey, public: RSAKeyItemAttributes, private: RSAKeyItemAttributes) {
        typealias Generated = (key: RSAPrivateKey, public: RSAKeyItemAttributes, private: RSAKeyItemAttributes)
        let generated: RSAHandOver<Generated> = try await RSABlockingWork.run {
            [self] (flag: RSACancellationFlag) throws -> RSAHandOver<Generated> in
            let made: Generated = try RSAPrivateKey.cancellingKeyGeneration {
                try generateKeyPair(
                    tag: tag, privateTag: privateTag, label: label, bitCount: bitCount,
                    publicExponent: publicExponent, replace: replace
                ) { _ in !flag.isCancelled }
            }
            return RSAHandOver(made)
        }
        return generated.value
    }

    /// The async form of `importIdentity(pkcs12:passphrase:tag:label:replace:)` (Apple's
    /// `SecPKCS12Import` and `SecItemAdd`): the file's key derivation, MAC check and the
    /// store's write run in RSAKit's bounded pool, never on the cooperative pool.
    ///
    /// - Returns: the identity as stored, and the file's contents.
    /// - Throws: `CancellationError` when the task was cancelled before the import started
    ///   (once started it runs to its end: one write, all or nothing); every error of the
    ///   synchronous form.
    @discardableResult
    public func importIdentityAsync(
        pkcs12: [UInt8], passphrase: [UInt8], tag: String? = nil, label: String? = nil,
        replace: Bool = false
    ) async throws -> (identity: RSAIdentityItem, contents: RSAPKCS12) {
        typealias Imported = (identity: RSAIdentityItem, contents: RSAPKCS12)
        let imported: RSAHandOver<Imported> = try await RSABlockingWork.run {
            [self] (_: RSACancellationFlag) throws -> RSAHandOver<Imported> in
            RSAHandOver(
                try importIdentity(pkcs12: pkcs12, passphrase: passphrase, tag: tag, label: label, replace: replace))
        }
        return imported.value
    }
}
