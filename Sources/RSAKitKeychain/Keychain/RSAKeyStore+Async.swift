import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The async form of opening a protected store (Argon2id at the store's cost), off the
// cooperative pool (RSABlockingWork), as RSAKitCore's RSAKeys+Async.swift does for keys.

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
    public static func open(at url: URL, passphrase: RSASecretBytes? = nil,
                            createIfMissing: Bool = true) async throws -> RSAKeyStore {
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
}
