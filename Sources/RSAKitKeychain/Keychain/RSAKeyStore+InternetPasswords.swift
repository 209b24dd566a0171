// Internet passwords (Apple's kSecClassInternetPassword): add, copy matching, update, delete. They
// share the generic passwords' folder, file format and sealing; a file name is I A (see
// StoreLayout.internetPasswordHash), and the metadata record carries the internet attributes.

import RSAKitCore
import RSAKitPKI

extension RSAKeyStore {
    /// Add an internet password (`SecItemAdd` with `kSecClassInternetPassword`,
    /// `security add-internet-password`). Only adds: an existing item with the same key is
    /// refused and left as it is; change one with ``updateInternetPassword(_:value:label:comment:)``
    /// (`SecItemUpdate`). Sealed under the store key in a protected store (which must be unlocked).
    ///
    /// - Parameters:
    ///   - value: the secret, 0 to ``maximumPasswordByteCount`` bytes.
    ///   - key: the unique attributes (server, protocol, port, path, account, authentication
    ///     type, security domain).
    ///   - label, comment: optional free text (at most ``maximumLabelByteCount`` bytes each).
    /// - Returns: the new item's attributes.
    /// - Throws: `RSAError.duplicateItem` (``RSAKeychainItemQuery/internetPassword(_:)``) when
    ///   an item with this key exists, damaged or not (nothing is written);
    ///   `RSAError.keychainLocked`; `RSAError.invalidAttribute`, `RSAError.invalidLabel`;
    ///   `RSAError.storeIOError`.
    @discardableResult
    public func addInternetPassword(
        _ value: RSASecretBytes, for key: RSAInternetPasswordKey, label: String? = nil, comment: String? = nil
    ) throws -> RSAInternetPasswordAttributes {
        try RSAKeyStore.validateLabel(label)
        try RSAKeyStore.validateLabel(comment)
        try RSAKeyStore.validatePasswordValue(value)
        let group = accessGroupForNewItems
        let hash = StoreLayout.internetPasswordHash(key, group: group)
        let path = StoreLayout.passwordPath(hash: hash)
        return try withWriteTransaction { tx in
            guard try StoreFileSystem.status(layout.absolute(path)) == nil else {
                throw RSAError.duplicateItem(.internetPassword(key))
            }
            try registerGroup(group, in: &tx)
            let storeKey = try currentStoreKey()
            let now = StoreItemRecord.formatDate(milliseconds: StoreItemRecord.nowMilliseconds())
            let metadata = StorePasswordMetadata(
                itemID: StoreLayout.newItemID(hash: hash, kind: .password), service: key.server,
                account: key.account, label: label, comment: comment, creationDate: now,
                modificationDate: now, valueByteCount: value.count, internet: StoreInternetAttributes(key),
                accessGroup: RSAKeyStore.recordedGroup(group))
            var contents = try encodePassword(metadata, value: value, storeKey: storeKey)
            defer { wipe(&contents) }
            try tx.stageFile(path, contents: contents)
            return metadata.internetAttributes()!
        }
    }

    /// Change the value, the label or the comment of the internet password with exactly this
    /// key (`SecItemUpdate`): each parameter given replaces that attribute, nil leaves it as it
    /// is, and an empty label or comment removes it. The item id and creation date stay; the modification date is set.
    /// Only updates: a
    /// missing item is not created. The key's seven attributes are the item's identity (its
    /// item id and the sealing of its value are bound to them), so they are not changed here.
    ///
    /// - Parameters:
    ///   - key: which item (as ``internetPassword(_:)``).
    ///   - value: the new secret, 0 to ``maximumPasswordByteCount`` bytes; a protected store
    ///     must be unlocked to seal it.
    ///   - label, comment: the new free text (at most ``maximumLabelByteCount`` bytes each).
    /// - Returns: the item's attributes after the change.
    /// - Throws: `RSAError.itemNotFound` (``RSAKeychainItemQuery/internetPassword(_:)``) when
    ///   there is no such item (nothing is written); `RSAError.keychainLocked` when a value is
    ///   given for a locked protected store; `RSAError.damagedItem`; `RSAError.invalidAttribute`;
    ///   `RSAError.invalidLabel`; `RSAError.storeIOError`.
    @discardableResult
    public func updateInternetPassword(
        _ key: RSAInternetPasswordKey, value: RSASecretBytes? = nil, label: String? = nil, comment: String? = nil
    ) throws -> RSAInternetPasswordAttributes {
        let updated = try updatePassword(
            hash: { StoreLayout.internetPasswordHash(key, group: $0) }, query: .internetPassword(key),
            value: value, label: label, comment: comment)
        guard let attributes = updated.internetAttributes() else {
            throw RSAError.internalError("updated internet password has no key")
        }
        return attributes
    }

    /// The attributes of the internet password with exactly this key. Needs no passphrase.
    /// - Throws: `RSAError.itemNotFound` (``RSAKeychainItemQuery/internetPassword(_:)``) when
    ///   there is none; `RSAError.damagedItem`; `RSAError.storeIOError`.
    public func internetPassword(_ key: RSAInternetPasswordKey) throws -> RSAInternetPasswordAttributes {
        try withReadLock { try loadInternetPassword(key).1 }
    }

    /// The value of the internet password with exactly this key (`kSecReturnData`); a
    /// protected store must be unlocked.
    /// - Returns: the value's bytes (zeroed when freed).
    /// - Throws: `RSAError.itemNotFound` when there is none; `RSAError.keychainLocked`; `RSAError.damagedItem`;
    ///   `RSAError.storeIOError`.
    public func internetPasswordValue(_ key: RSAInternetPasswordKey) throws -> RSASecretBytes {
        try withReadLock {
            let (loaded, _) = try loadInternetPassword(key)
            return try openPassword(loaded, storeKey: loaded.sealed ? currentStoreKey() : nil)
        }
    }

    /// Every internet password `query` matches (`SecItemCopyMatching` with
    /// `kSecMatchLimitAll`), sorted by server, protocol, port, path, then account. Reads every
    /// password file; needs no passphrase.
    /// - Returns: the matching items; `[]` when none matches (a list lookup never throws
    ///   `RSAError.itemNotFound`).
    /// - Throws: `RSAError.damagedItem` when a password file is damaged: its class and key
    ///   cannot be read, so it might match (a lookup does not drop it; ``allItems()`` lists it
    ///   with the others); `RSAError.storeIOError`.
    public func internetPasswords(matching query: RSAInternetPasswordQuery = RSAInternetPasswordQuery()) throws
        -> [RSAInternetPasswordAttributes]
    {
        let found = try withReadLock {
            try passwordFileHashes().compactMap { hash -> RSAInternetPasswordAttributes? in
                guard let loaded = try loadPassword(hash: hash), let attributes = loaded.metadata.internetAttributes(),
                    query.matches(attributes.key)
                else { return nil }
                return attributes
            }
        }
        return found.sorted { a, b in
            let x = a.key, y = b.key
            if x.server != y.server { return x.server.utf8.lexicographicallyPrecedes(y.server.utf8) }
            if x.protocol != y.protocol { return x.protocol < y.protocol }
            if x.port != y.port { return x.port < y.port }
            if x.path != y.path { return x.path.utf8.lexicographicallyPrecedes(y.path.utf8) }
            return x.account.utf8.lexicographicallyPrecedes(y.account.utf8)
        }
    }

    /// Delete the internet password with exactly this key (`SecItemDelete`); a damaged one too.
    /// - Throws: `RSAError.itemNotFound` when there is none; `RSAError.storeIOError`.
    public func deleteInternetPassword(_ key: RSAInternetPasswordKey) throws {
        try withWriteTransaction { tx in
            let hash = try resolveInternetPassword(key)
            let path = StoreLayout.passwordPath(hash: hash)
            guard try StoreFileSystem.status(layout.absolute(path)) != nil else {
                throw RSAError.itemNotFound(.internetPassword(key))
            }
            try checkPasswordDeletable(hash: hash)
            tx.remove(path)
        }
    }

    // MARK: Internals

    /// The loaded file of `key` (the caller holds a lock).
    private func loadInternetPassword(_ key: RSAInternetPasswordKey) throws -> (
        LoadedPassword, RSAInternetPasswordAttributes
    ) {
        guard let loaded = try loadPassword(hash: try resolveInternetPassword(key)),
            let attributes = loaded.metadata.internetAttributes()
        else {
            throw RSAError.itemNotFound(.internetPassword(key))
        }
        return (loaded, attributes)
    }

    /// The hash of the internet password file a lookup of `key` reads: see
    /// ``resolveName(_:hash:path:)``. Call under a lock.
    ///
    /// - Throws: `RSAError.ambiguousItem`, `RSAError.storeIOError`.
    func resolveInternetPassword(_ key: RSAInternetPasswordKey) throws -> String {
        try resolveName(
            .internetPassword(key), hash: { StoreLayout.internetPasswordHash(key, group: $0) },
            path: StoreLayout.passwordPath)
    }

    /// The hashes (128 hex digits) of every file in the passwords folder, generic and internet.
    func passwordFileHashes() throws -> [String] {
        try recordFileHashes(in: StoreLayout.passwordDirectory, digits: 128)
    }

    /// The hashes of the record files "folder/hh/H.item" (H of `digits` hex digits), shard by
    /// shard in order, names sorted. Call under a lock.
    /// - Throws: `RSAError.storeIOError` when a folder cannot be listed.
    func recordFileHashes(in folder: String, digits: Int) throws -> [String] {
        var hashes: [String] = []
        for shard in try StoreFileSystem.listDirectory(layout.absolute(folder)).sorted()
        where StoreLayout.isShardName(shard) {
            for name in try StoreFileSystem.listDirectory(layout.absolute(folder + "/" + shard)).sorted() {
                if let hash = StoreLayout.recordHash(fromName: name, digits: digits) { hashes.append(hash) }
            }
        }
        return hashes
    }
}
