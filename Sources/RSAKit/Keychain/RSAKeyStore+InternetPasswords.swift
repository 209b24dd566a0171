// Internet passwords (Apple's kSecClassInternetPassword): add, copy matching, delete. They
// share the generic passwords' folder, file format and sealing; a file name is I A (see
// StoreLayout.internetPasswordHash), and the metadata record carries the internet attributes.

extension RSAKeyStore {
    /// Add an internet password (`SecItemAdd` with `kSecClassInternetPassword`,
    /// `security add-internet-password`), or with `update` change the value (and the label and
    /// comment given) of the existing item with the same key (`-U`). Sealed under the store key
    /// in a protected store (which must be unlocked).
    ///
    /// - Parameters:
    ///   - value: the secret, 0 to ``maximumPasswordByteCount`` bytes.
    ///   - key: the unique attributes (server, protocol, port, path, account, authentication
    ///     type, security domain).
    ///   - label, comment: optional free text (at most ``maximumLabelByteCount`` bytes each).
    /// - Returns: the item's attributes.
    /// - Throws: `RSAError.duplicateItem` when the key exists and `update` is false (nothing is
    ///   written); `RSAError.keychainLocked`; `RSAError.invalidAttribute`, `RSAError.invalidLabel`;
    ///   `RSAError.damagedItem`; `RSAError.storeIOError`.
    @discardableResult
    public func addInternetPassword(
        _ value: RSASecretBytes, for key: RSAInternetPasswordKey, label: String? = nil, comment: String? = nil,
        update: Bool = false
    ) throws -> RSAInternetPasswordAttributes {
        try RSAKeyStore.validateLabel(label)
        try RSAKeyStore.validateLabel(comment)
        guard value.count <= RSAKeyStore.maximumPasswordByteCount else {
            throw RSAError.invalidAttribute(reason: "the password is \(value.count) bytes; at most \(RSAKeyStore.maximumPasswordByteCount) are allowed")
        }
        let hash = StoreLayout.internetPasswordHash(key)
        return try withWriteTransaction { tx in
            let storeKey = try currentStoreKey()
            let now = StoreItemRecord.formatDate(milliseconds: StoreItemRecord.nowMilliseconds())
            var metadata: StorePasswordMetadata
            if let existing = try loadPassword(hash: hash) {
                guard update else { throw RSAError.duplicateItem(item: Self.describeInternetPassword(key)) }
                metadata = existing.metadata
                if label != nil { metadata.label = label }
                if comment != nil { metadata.comment = comment }
            } else {
                metadata = StorePasswordMetadata(
                    itemID: StoreLayout.newItemID(hash: hash, kind: "password"), service: key.server,
                    account: key.account, label: label, comment: comment, creationDate: now,
                    modificationDate: "", valueByteCount: 0, internet: StoreInternetAttributes(key))
            }
            metadata.modificationDate = now
            metadata.valueByteCount = value.count
            var contents = try encodePassword(metadata, value: value, storeKey: storeKey)
            defer { wipe(&contents) }
            try tx.stageFile(StoreLayout.passwordPath(hash: hash), contents: contents)
            return metadata.internetAttributes()!
        }
    }

    /// The attributes of the internet password with exactly this key. Needs no passphrase.
    /// - Throws: `RSAError.noSuchItem`; `RSAError.damagedItem`; `RSAError.storeIOError`.
    public func internetPassword(_ key: RSAInternetPasswordKey) throws -> RSAInternetPasswordAttributes {
        try withReadLock { try loadInternetPassword(key).1 }
    }

    /// The value of the internet password with exactly this key (`kSecReturnData`); a
    /// protected store must be unlocked.
    /// - Returns: the value's bytes (zeroed when freed).
    /// - Throws: `RSAError.noSuchItem`; `RSAError.keychainLocked`; `RSAError.damagedItem`;
    ///   `RSAError.storeIOError`.
    public func internetPasswordValue(_ key: RSAInternetPasswordKey) throws -> RSASecretBytes {
        try withReadLock {
            let (loaded, _) = try loadInternetPassword(key)
            return try openPassword(loaded, storeKey: loaded.sealed ? currentStoreKey() : nil)
        }
    }

    /// Every internet password `query` matches (`SecItemCopyMatching` with
    /// `kSecMatchLimitAll`), sorted by server, protocol, port, path, then account. Reads every
    /// password file; needs no passphrase. Damaged items are left out (``allKeychainItems()``
    /// reports them).
    /// - Throws: `RSAError.storeIOError`.
    public func internetPasswords(matching query: RSAInternetPasswordQuery = RSAInternetPasswordQuery()) throws -> [RSAInternetPasswordAttributes] {
        let found = try withReadLock {
            try passwordFileHashes().compactMap { hash -> RSAInternetPasswordAttributes? in
                guard let loaded = try? loadPassword(hash: hash), let attributes = loaded.metadata.internetAttributes(),
                      query.matches(attributes.key) else { return nil }
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
    /// - Throws: `RSAError.noSuchItem`; `RSAError.storeIOError`.
    public func deleteInternetPassword(_ key: RSAInternetPasswordKey) throws {
        let path = StoreLayout.passwordPath(hash: StoreLayout.internetPasswordHash(key))
        try withWriteTransaction { tx in
            guard try StoreFileSystem.status(layout.absolute(path)) != nil else {
                throw RSAError.noSuchItem(item: Self.describeInternetPassword(key))
            }
            tx.remove(path)
        }
    }

    // MARK: Internals

    static func describeInternetPassword(_ key: RSAInternetPasswordKey) -> String {
        "internet password for \(key)"
    }

    /// The loaded file of `key` (the caller holds a lock).
    private func loadInternetPassword(_ key: RSAInternetPasswordKey) throws -> (LoadedPassword, RSAInternetPasswordAttributes) {
        guard let loaded = try loadPassword(hash: StoreLayout.internetPasswordHash(key)),
              let attributes = loaded.metadata.internetAttributes() else {
            throw RSAError.noSuchItem(item: Self.describeInternetPassword(key))
        }
        return (loaded, attributes)
    }

    /// The hashes (128 hex digits) of every file in the passwords folder, generic and internet.
    func passwordFileHashes() throws -> [String] {
        let folder = StoreLayout.passwordDirectory
        var hashes: [String] = []
        for shard in try StoreFileSystem.listDirectory(layout.absolute(folder)).sorted() where StoreLayout.isShardName(shard) {
            for name in try StoreFileSystem.listDirectory(layout.absolute(folder + "/" + shard)).sorted() {
                if let hash = StoreLayout.recordHash(fromName: name, digits: 128) { hashes.append(hash) }
            }
        }
        return hashes
    }
}
