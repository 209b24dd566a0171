// Protection of secrets at rest: protect, unlock, change the passphrase, unprotect.
// See StoreSealing.swift for the design.

import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whether a store's secrets are sealed, and how its passphrase is stretched
/// (`rsakit store info`).
public struct RSAKeychainProtectionInfo: Sendable, Equatable {
    /// True when private keys and password values are sealed under a passphrase.
    public let isProtected: Bool
    /// The Argon2id parameters recorded in the store (nil when not protected).
    public let parameters: RSAArgon2idParameters?
    /// When the passphrase was last set (nil when not protected).
    public let passphraseDate: Date?
    /// Whether this object holds the store key (after ``RSAKeyStore/unlock(passphrase:)``).
    public let isUnlocked: Bool
    /// Whether the store key is also sealed to this machine's TPM
    /// (``RSAKeyStore/sealStoreKeyToTPM(passphrase:pin:)``), so that
    /// ``RSAKeyStore/unlockWithTPM(pin:)`` opens it without the passphrase.
    public var isSealedToTPM: Bool = false
}

extension RSAKeyStore {
    /// Whether the store is protected and how (reads one small file; no passphrase needed).
    ///
    /// - Throws: `RSAError.storeIOError` when the protection record cannot be read.
    public func protectionInfo() throws -> RSAKeychainProtectionInfo {
        let record = try withReadLock { try readProtection() }
        let unlockedID = unlocked.withLock { $0?.keyID }
        var info = RSAKeychainProtectionInfo(
            isProtected: record != nil, parameters: try record?.parameters,
            passphraseDate: record.flatMap { StoreItemRecord.parseDate($0.passphraseDate) }.map {
                StoreItemRecord.date(milliseconds: $0)
            },
            isUnlocked: record != nil && unlockedID == record?.keyID)
        info.isSealedToTPM = record?.tpm != nil
        return info
    }

    /// Whether the store is protected by a passphrase.
    public var isProtected: Bool {
        get throws { try protectionInfo().isProtected }
    }

    /// Open the store key with `passphrase` and keep it in this object until ``lock()``, so
    /// that secrets can be read and written. Argon2id with the recorded parameters runs once.
    /// Does nothing on an unprotected store.
    ///
    /// - Throws: `RSAError.wrongPassphrase`; `RSAError.invalidKDFParameters`;
    ///   `RSAError.storeIOError`.
    public func unlock(passphrase: RSASecretBytes) throws {
        guard let record = try withReadLock({ try readProtection() }) else { return }
        let key = try record.open(passphrase: passphrase)
        unlocked.withLock { $0 = key }
    }

    /// Forget the store key (its bytes are zeroed when the last reference goes).
    public func lock() {
        unlocked.withLock { $0 = nil }
    }

    /// Protect an unprotected store with `passphrase` in one atomic step: a new random
    /// 256-bit store key is sealed by an Argon2id key-encryption key, and every private key
    /// and password value is sealed under the store key (XChaCha20-Poly1305, the item's
    /// identity as associated data). After a crash the store is either as before or fully
    /// protected. The store stays unlocked in this object.
    ///
    /// - Parameters:
    ///   - passphrase: the new passphrase (at least 1 byte).
    ///   - parameters: Argon2id costs (default libsodium's MODERATE).
    /// - Throws: `RSAError.keychainProtection` when already protected or the passphrase is
    ///   empty; `RSAError.damagedItem` when an item cannot be read (nothing changes);
    ///   `RSAError.invalidKDFParameters`; `RSAError.storeIOError`.
    public func protect(passphrase: RSASecretBytes, parameters: RSAArgon2idParameters = .moderate) throws {
        try protect(passphrase: passphrase, parameters: parameters, crashPoint: nil)
    }

    internal func protect(passphrase: RSASecretBytes, parameters: RSAArgon2idParameters, crashPoint: StoreCrashPoint?)
        throws
    {
        guard !passphrase.isEmpty else { throw RSAError.keychainProtection(reason: "the passphrase is empty") }
        let storeKey = StoreProtectionRecord.newStoreKey()
        let record = try StoreProtectionRecord.make(storeKey: storeKey, passphrase: passphrase, parameters: parameters)
        try withWriteTransaction(crashPoint: crashPoint) { tx in
            guard try readProtection() == nil else {
                throw RSAError.keychainProtection(reason: "the store is already protected")
            }
            try resealSecrets(from: nil, to: storeKey, into: &tx)
            try tx.stageFile(StoreLayout.protectionName, contents: try record.encode())
        }
        unlocked.withLock { $0 = storeKey }
    }

    /// Change the passphrase: only the sealed store key is rewritten (one file, atomically);
    /// the items do not change.
    ///
    /// - Throws: `RSAError.wrongPassphrase` (nothing changes); `RSAError.keychainProtection`
    ///   when the store is not protected or the new passphrase is empty;
    ///   `RSAError.invalidKDFParameters`; `RSAError.storeIOError`.
    public func changePassphrase(
        from old: RSASecretBytes, to new: RSASecretBytes, parameters: RSAArgon2idParameters? = nil
    ) throws {
        try changePassphrase(from: old, to: new, parameters: parameters, crashPoint: nil)
    }

    internal func changePassphrase(
        from old: RSASecretBytes, to new: RSASecretBytes, parameters: RSAArgon2idParameters?,
        crashPoint: StoreCrashPoint?
    ) throws {
        guard !new.isEmpty else { throw RSAError.keychainProtection(reason: "the new passphrase is empty") }
        try withWriteTransaction(crashPoint: crashPoint) { tx in
            guard let record = try readProtection() else {
                throw RSAError.keychainProtection(reason: "the store is not protected")
            }
            let storeKey = try record.open(passphrase: old)
            var fresh = try StoreProtectionRecord.make(
                storeKey: storeKey, passphrase: new, parameters: try parameters ?? record.parameters)
            // The TPM's seal opens the same store key: it stays.
            fresh.tpm = record.tpm
            try tx.stageFile(StoreLayout.protectionName, contents: try fresh.encode())
            unlocked.withLock { $0 = storeKey }
        }
    }

    /// Remove the protection in one atomic step: every secret is written back in the clear
    /// (private keys as PKCS#8 PEM, password values as base64) and the protection record is
    /// removed.
    ///
    /// - Throws: `RSAError.wrongPassphrase` (nothing changes); `RSAError.keychainProtection`
    ///   when the store is not protected; `RSAError.damagedItem`; `RSAError.storeIOError`.
    public func unprotect(passphrase: RSASecretBytes) throws {
        try withWriteTransaction { tx in
            guard let record = try readProtection() else {
                throw RSAError.keychainProtection(reason: "the store is not protected")
            }
            let storeKey = try record.open(passphrase: passphrase)
            try resealSecrets(from: storeKey, to: nil, into: &tx)
            tx.remove(StoreLayout.protectionName)
        }
        lock()
    }

    // MARK: Internals

    /// The protection record, or nil for an unprotected store. Call under a lock.
    func readProtection() throws -> StoreProtectionRecord? {
        guard let file = try StoreFileSystem.readFile(layout.protectionPath, maximumByteCount: 64 * 1024) else {
            return nil
        }
        return try StoreProtectionRecord.decode(file.bytes, path: layout.protectionPath)
    }

    /// The store key to seal or open secrets with: nil for an unprotected store. Call under a lock.
    ///
    /// - Throws: `RSAError.keychainLocked` when the store is protected and this object does
    ///   not hold its current key.
    package func currentStoreKey() throws -> UnlockedStoreKey? {
        guard let record = try readProtection() else { return nil }
        guard let key = unlocked.withLock({ $0 }), key.keyID == record.keyID else {
            throw RSAError.keychainLocked
        }
        return key
    }

    /// Rewrite every private key and password value: opened with `from` (nil: in the clear)
    /// and written sealed with `to` (nil: in the clear). Call inside a write transaction.
    func resealSecrets(from old: UnlockedStoreKey?, to new: UnlockedStoreKey?, into tx: inout StoreTransaction) throws {
        let privateFolder = StoreLayout.classDirectory(.private)
        for shard in try StoreFileSystem.listDirectory(layout.absolute(privateFolder)).sorted()
        where StoreLayout.isShardName(shard) {
            for name in try StoreFileSystem.listDirectory(layout.absolute(privateFolder + "/" + shard)).sorted() {
                guard let tagHash = StoreLayout.tagHash(fromItemName: name),
                    let loaded = try loadItem(
                        .private, tagHash: tagHash, knownTag: nil, secrets: .key(old), anyGroup: true)
                else { continue }
                // A token key's item holds only its public key and the reference: nothing to seal.
                guard loaded.metadata.token == nil else { continue }
                var contents = try encodeKeyItem(
                    loaded.metadata, privateKey: loaded.privateKey!, publicKey: loaded.publicKey, storeKey: new)
                defer { wipe(&contents) }
                try tx.stageFile(StoreLayout.itemPath(.private, tagHash: tagHash), contents: contents)
            }
        }
        let passwordFolder = StoreLayout.passwordDirectory
        for shard in try StoreFileSystem.listDirectory(layout.absolute(passwordFolder)).sorted()
        where StoreLayout.isShardName(shard) {
            for name in try StoreFileSystem.listDirectory(layout.absolute(passwordFolder + "/" + shard)).sorted() {
                guard let hash = StoreLayout.recordHash(fromName: name, digits: 128),
                    let loaded = try loadPassword(hash: hash, anyGroup: true)
                else { continue }
                let value = try openPassword(loaded, storeKey: old)
                var contents = try encodePassword(loaded.metadata, value: value, storeKey: new)
                defer { wipe(&contents) }
                try tx.stageFile(StoreLayout.passwordPath(hash: hash), contents: contents)
            }
        }
    }
}
