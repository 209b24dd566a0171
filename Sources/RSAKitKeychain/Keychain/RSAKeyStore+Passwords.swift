// Generic passwords (Apple's kSecClassGenericPassword): add, copy matching by service and
// account, update, delete. One file per item, named after the SHA-256 of the service and of
// the account, so an exact lookup opens one file and a lookup by service lists one folder.

import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSAKeyStore {
    /// The longest service or account, in bytes of UTF-8.
    public static let maximumServiceByteCount = RSAInternetPasswordKey.maximumAttributeByteCount
    /// The longest password value, in bytes.
    public static let maximumPasswordByteCount = 16 * 1024

    /// Add a generic password (`SecItemAdd` with `kSecClassGenericPassword`). Only adds: an
    /// existing (service, account) is refused and left as it is; change one with
    /// ``updateGenericPassword(service:account:value:label:comment:)`` (`SecItemUpdate`). In a
    /// protected store the value is sealed with XChaCha20-Poly1305 under the store key (the
    /// store must be unlocked).
    ///
    /// - Parameters:
    ///   - value: the secret, 0 to ``maximumPasswordByteCount`` arbitrary bytes (NUL included).
    ///   - service: 1 to 255 bytes of UTF-8; account: 0 to 255.
    ///   - label, comment: optional free text (at most ``maximumLabelByteCount`` bytes each).
    /// - Returns: the new item's attributes.
    /// - Throws: `RSAError.duplicateItem` (``RSAKeychainItemQuery/genericPassword(service:account:)``)
    ///   when (service, account) exists, damaged or not (nothing is written);
    ///   `RSAError.keychainLocked` for a locked protected store; `RSAError.invalidAttribute`,
    ///   `RSAError.invalidLabel`, `RSAError.storeIOError`.
    @discardableResult
    public func addGenericPassword(
        _ value: RSASecretBytes, service: String, account: String, label: String? = nil, comment: String? = nil
    ) throws -> RSAGenericPasswordAttributes {
        try addGenericPasswords([(value, service, account, label, comment)])[0]
    }

    /// Add several generic passwords in one atomic step (all or none), for importing.
    ///
    /// - Parameter entries: (value, service, account, label, comment); (service, account)
    ///   pairs must be distinct.
    /// - Returns: the new items' attributes, in the order given.
    /// - Throws: as ``addGenericPassword(_:service:account:label:comment:)``, for the first
    ///   entry that fails (a pair given twice is a `RSAError.duplicateItem`); nothing is written.
    @discardableResult
    public func addGenericPasswords(
        _ entries: [(value: RSASecretBytes, service: String, account: String, label: String?, comment: String?)]
    ) throws -> [RSAGenericPasswordAttributes] {
        for entry in entries {
            try RSAKeyStore.validateService(entry.service, account: entry.account)
            try RSAKeyStore.validateLabel(entry.label)
            try RSAKeyStore.validateLabel(entry.comment)
            try RSAKeyStore.validatePasswordValue(entry.value)
        }
        let group = accessGroupForNewItems
        return try withWriteTransaction { tx in
            var seen = Set<String>()
            for entry in entries {
                let hash = StoreLayout.passwordHash(service: entry.service, account: entry.account, group: group)
                // A damaged item still holds the name: it is a duplicate too (delete it first).
                guard seen.insert(hash).inserted,
                    try StoreFileSystem.status(layout.absolute(StoreLayout.passwordPath(hash: hash))) == nil
                else {
                    throw RSAError.duplicateItem(.genericPassword(service: entry.service, account: entry.account))
                }
            }
            let storeKey = try currentStoreKey()
            let now = StoreItemRecord.formatDate(milliseconds: StoreItemRecord.nowMilliseconds())
            if !entries.isEmpty { try registerGroup(group, in: &tx) }
            var result: [RSAGenericPasswordAttributes] = []
            for entry in entries {
                let (value, service, account, label, comment) = entry
                let hash = StoreLayout.passwordHash(service: service, account: account, group: group)
                let path = StoreLayout.passwordPath(hash: hash)
                let metadata = StorePasswordMetadata(
                    itemID: StoreLayout.newItemID(hash: hash, kind: .password), service: service,
                    account: account, label: label, comment: comment, creationDate: now,
                    modificationDate: now, valueByteCount: value.count,
                    accessGroup: RSAKeyStore.recordedGroup(group))
                var contents = try encodePassword(metadata, value: value, storeKey: storeKey)
                defer { wipe(&contents) }
                try tx.stageFile(path, contents: contents)
                result.append(metadata.attributes()!)
            }
            return result
        }
    }

    /// The attributes of the generic password (service, account). Opens one file; needs no
    /// passphrase.
    ///
    /// - Throws: `RSAError.itemNotFound` (``RSAKeychainItemQuery/genericPassword(service:account:)``)
    ///   when there is none; `RSAError.damagedItem`; `RSAError.invalidAttribute`;
    ///   `RSAError.storeIOError`.
    public func genericPassword(service: String, account: String) throws -> RSAGenericPasswordAttributes {
        try RSAKeyStore.validateService(service, account: account)
        guard
            let loaded = try withReadLock({
                try loadPassword(hash: try resolvePassword(service: service, account: account))
            })
        else {
            throw RSAError.itemNotFound(.genericPassword(service: service, account: account))
        }
        return loaded.attributes
    }

    /// Every generic password of `service` (any account), sorted by account. Lists one folder.
    ///
    /// - Returns: the items; `[]` when the service has none (a list lookup never throws
    ///   `RSAError.itemNotFound`).
    /// - Throws: `RSAError.damagedItem` when an item file of the service is damaged (a lookup
    ///   does not drop it; ``allItems()`` lists it with the others); `RSAError.invalidAttribute`;
    ///   `RSAError.storeIOError`.
    public func genericPasswords(service: String) throws -> [RSAGenericPasswordAttributes] {
        try RSAKeyStore.validateService(service, account: "")
        // One folder per group seen: the service's name is qualified by the group.
        let found: [RSAGenericPasswordAttributes] = try withReadLock {
            try lookupGroups().flatMap { group -> [RSAGenericPasswordAttributes] in
                let serviceHash = StoreLayout.serviceHash(service, group: group)
                let shard = StoreLayout.passwordShard(serviceHash: serviceHash)
                return try StoreFileSystem.listDirectory(layout.absolute(shard)).compactMap {
                    name -> RSAGenericPasswordAttributes? in
                    guard name.hasPrefix(serviceHash),
                        let hash = StoreLayout.recordHash(fromName: name, digits: 128)
                    else { return nil }
                    guard let loaded = try loadPassword(hash: hash), loaded.metadata.internet == nil else { return nil }
                    return loaded.attributes
                }
            }
        }
        return found.sorted {
            if !$0.account.utf8.elementsEqual($1.account.utf8) {
                return $0.account.utf8.lexicographicallyPrecedes($1.account.utf8)
            }
            return $0.accessGroup.utf8.lexicographicallyPrecedes($1.accessGroup.utf8)
        }
    }

    /// The value of the generic password (service, account) (`kSecReturnData`). In a
    /// protected store the store must be unlocked; the value is opened with the item's
    /// identity as associated data, so a sealed value moved from another item does not open.
    ///
    /// - Returns: the value's bytes (zeroed when the returned object is freed).
    /// - Throws: `RSAError.itemNotFound` when there is none; `RSAError.keychainLocked`;
    ///   `RSAError.damagedItem` (including a sealed value that does not open); `RSAError.storeIOError`.
    public func genericPasswordValue(service: String, account: String) throws -> RSASecretBytes {
        try RSAKeyStore.validateService(service, account: account)
        return try withReadLock {
            guard let loaded = try loadPassword(hash: try resolvePassword(service: service, account: account)) else {
                throw RSAError.itemNotFound(.genericPassword(service: service, account: account))
            }
            return try openPassword(loaded, storeKey: loaded.sealed ? currentStoreKey() : nil)
        }
    }

    /// Change the value, the label or the comment of the generic password (service, account)
    /// (`SecItemUpdate`): each parameter given replaces that attribute, nil leaves it as it is,
    /// and an empty label or comment removes it.
    /// The item id and creation date stay; the modification date is set. Only updates: a
    /// missing item is not created (add it with ``addGenericPassword(_:service:account:label:comment:)``).
    /// Service and account are the item's unique attributes and identity (its item id and the
    /// sealing of its value are bound to them), so they are not changed here: delete and add.
    ///
    /// - Parameters:
    ///   - service, account: which item (as ``genericPassword(service:account:)``).
    ///   - value: the new secret, 0 to ``maximumPasswordByteCount`` bytes; sealed under the
    ///     store key in a protected store, which must then be unlocked.
    ///   - label, comment: the new free text (at most ``maximumLabelByteCount`` bytes each).
    /// - Returns: the item's attributes after the change.
    /// - Throws: `RSAError.itemNotFound` (``RSAKeychainItemQuery/genericPassword(service:account:)``)
    ///   when there is no such item (nothing is written); `RSAError.keychainLocked` when a value
    ///   is given for a locked protected store; `RSAError.damagedItem`; `RSAError.invalidAttribute`;
    ///   `RSAError.invalidLabel`; `RSAError.storeIOError`.
    @discardableResult
    public func updateGenericPassword(
        service: String, account: String, value: RSASecretBytes? = nil, label: String? = nil, comment: String? = nil
    ) throws -> RSAGenericPasswordAttributes {
        try RSAKeyStore.validateService(service, account: account)
        let updated = try updatePassword(
            hash: { StoreLayout.passwordHash(service: service, account: account, group: $0) },
            query: .genericPassword(service: service, account: account),
            value: value, label: label, comment: comment)
        return updated.attributes()!
    }

    /// Delete the generic password (service, account) (`SecItemDelete`). A damaged item is
    /// deleted too.
    ///
    /// - Throws: `RSAError.itemNotFound` when there is none; `RSAError.invalidAttribute`;
    ///   `RSAError.storeIOError`.
    public func deleteGenericPassword(service: String, account: String) throws {
        try RSAKeyStore.validateService(service, account: account)
        try withWriteTransaction { tx in
            let hash = try resolvePassword(service: service, account: account)
            let path = StoreLayout.passwordPath(hash: hash)
            guard try StoreFileSystem.status(layout.absolute(path)) != nil else {
                throw RSAError.itemNotFound(.genericPassword(service: service, account: account))
            }
            try checkPasswordDeletable(hash: hash)
            tx.remove(path)
        }
    }

    // MARK: Internals

    /// The hash of the generic password file a lookup of (service, account) reads: see
    /// ``resolveName(_:hash:path:)``. Call under a lock.
    ///
    /// - Throws: `RSAError.ambiguousItem`, `RSAError.storeIOError`.
    func resolvePassword(service: String, account: String) throws -> String {
        try resolveName(
            .genericPassword(service: service, account: account),
            hash: { StoreLayout.passwordHash(service: service, account: account, group: $0) },
            path: StoreLayout.passwordPath)
    }

    /// `SecItemUpdate` for both password classes: the item file the name resolves to (`hash`
    /// gives the file hash of the name in a group) rewritten with the attributes given (nil:
    /// unchanged), under the write lock.
    /// - Throws: `RSAError.itemNotFound(query)` when the file is absent; as
    ///   ``updateGenericPassword(service:account:value:label:comment:)``.
    func updatePassword(
        hash name: (String) -> String, query: RSAKeychainItemQuery, value: RSASecretBytes?, label: String?,
        comment: String?
    ) throws -> StorePasswordMetadata {
        try RSAKeyStore.validateLabel(label)
        try RSAKeyStore.validateLabel(comment)
        if let value { try RSAKeyStore.validatePasswordValue(value) }
        return try withWriteTransaction { tx in
            let hash = try resolveName(query, hash: name, path: StoreLayout.passwordPath)
            guard let loaded = try loadPassword(hash: hash, anyGroup: true),
                query.itemClass == (loaded.metadata.internet == nil ? .genericPassword : .internetPassword)
            else {
                throw RSAError.itemNotFound(query)
            }
            try checkWritable(RSAKeyStore.checkedGroup(loaded.metadata.accessGroup) ?? "")
            var metadata = loaded.metadata
            // An empty string removes the attribute: nil already means "leave it".
            if let label { metadata.label = label.isEmpty ? nil : label }
            if let comment { metadata.comment = comment.isEmpty ? nil : comment }
            metadata.modificationDate = StoreItemRecord.formatDate(milliseconds: StoreItemRecord.nowMilliseconds())
            var contents: [UInt8]
            if let value {
                metadata.valueByteCount = value.count
                contents = try encodePassword(metadata, value: value, storeKey: try currentStoreKey())
            } else {
                contents = try StorePasswordFile.encode(metadata, secret: loaded.secret, sealed: loaded.sealed)
            }
            defer { wipe(&contents) }
            try tx.stageFile(StoreLayout.passwordPath(hash: hash), contents: contents)
            return metadata
        }
    }

    /// - Throws: `RSAError.invalidAttribute` for a value longer than ``maximumPasswordByteCount``.
    static func validatePasswordValue(_ value: RSASecretBytes) throws {
        guard value.count <= maximumPasswordByteCount else {
            throw RSAError.invalidAttribute(
                reason: "the password is \(value.count) bytes; at most \(maximumPasswordByteCount) are allowed")
        }
    }

    /// - Throws: `RSAError.invalidAttribute` for an empty or long service, a long account.
    static func validateService(_ service: String, account: String) throws {
        guard !service.utf8.isEmpty else { throw RSAError.invalidAttribute(reason: "the service is empty") }
        for (name, value) in [("service", service), ("account", account)]
        where value.utf8.count > maximumServiceByteCount {
            throw RSAError.invalidAttribute(
                reason:
                    "the \(name) is \(value.utf8.count) bytes of UTF-8; at most \(maximumServiceByteCount) are allowed")
        }
    }

    /// A password file read and checked (its secret still sealed when `sealed`).
    struct LoadedPassword {
        var metadata: StorePasswordMetadata
        var attributes: RSAGenericPasswordAttributes
        var secret: [UInt8]
        var sealed: Bool
        var path: String
    }

    /// Read and check the password file of `hash` (128 hex digits); nil when absent, or when
    /// its access group is not visible through this store object (unless `anyGroup`).
    ///
    /// - Throws: `RSAError.damagedItem`, `RSAError.insecureStorePermissions`, `RSAError.storeIOError`.
    func loadPassword(hash: String, anyGroup: Bool = false) throws -> LoadedPassword? {
        let path = layout.absolute(StoreLayout.passwordPath(hash: hash))
        let file: StoreFileSystem.FileContents
        do {
            guard let read = try StoreFileSystem.readFile(path, maximumByteCount: StoreItemRecord.maximumFileByteCount)
            else {
                return nil
            }
            file = read
        } catch let RSAError.storeIOError(_, reason) {
            throw RSAError.damagedItem(tag: nil, path: path, reason: reason)
        }
        var bytes = file.bytes
        defer { wipe(&bytes) }
        if !allowsInsecurePermissions {
            if let finding = layout.permissions.finding(path, file.status) { throw finding }
        }
        do {
            let (metadata, sealed, secret) = try StorePasswordFile.decode(bytes)
            guard let group = RSAKeyStore.checkedGroup(metadata.accessGroup) else {
                throw StoreDamage("the access group is not a valid group name")
            }
            guard metadata.fileHash == hash else {
                throw StoreDamage("the service, account and access group in the metadata do not match the file name")
            }
            if metadata.internet != nil && metadata.internetAttributes() == nil {
                throw StoreDamage("a date is not valid")
            }
            guard case .password(let idHash)? = StoreLayout.parseAnyItemID(metadata.itemID), idHash == hash else {
                throw StoreDamage("the item id does not belong to this item")
            }
            guard let attributes = metadata.attributes() else { throw StoreDamage("a date is not valid") }
            guard sealed || secret.count == metadata.valueByteCount,
                !sealed || secret.count == metadata.valueByteCount + Sodium.nonceByteCount + Sodium.tagByteCount
            else {
                throw StoreDamage("the value length does not match the metadata")
            }
            guard anyGroup || isVisible(group) else { return nil }
            return LoadedPassword(
                metadata: metadata, attributes: attributes, secret: secret, sealed: sealed, path: path)
        } catch let damage as StoreDamage {
            throw RSAError.damagedItem(tag: nil, path: path, reason: damage.reason)
        }
    }

    /// Refuse to delete the password file of `hash` when this store was opened with groups
    /// and the item belongs to another one (a damaged item, whose group cannot be read, is
    /// deleted only through a store opened without groups: its damage error is thrown).
    ///
    /// - Throws: `RSAError.accessGroupNotAllowed`, `RSAError.damagedItem`.
    func checkPasswordDeletable(hash: String) throws {
        guard accessGroups != nil, let loaded = try loadPassword(hash: hash, anyGroup: true) else { return }
        try checkWritable(RSAKeyStore.checkedGroup(loaded.metadata.accessGroup) ?? "")
    }

    /// The value of a loaded password, opened with `storeKey` when sealed.
    func openPassword(_ loaded: LoadedPassword, storeKey: UnlockedStoreKey?) throws -> RSASecretBytes {
        guard loaded.sealed else { return RSASecretBytes(copying: loaded.secret) }
        guard let storeKey else { throw RSAError.keychainLocked }
        guard
            let value = try StoreSealing.open(
                loaded.secret, key: storeKey, associatedData: loaded.metadata.associatedData)
        else {
            throw RSAError.damagedItem(
                tag: nil, path: loaded.path,
                reason:
                    "the sealed value does not open under the store key for this item (moved from another item, or "
                    + "modified)"
            )
        }
        return value
    }

    /// The file bytes of a password item, the value sealed when `storeKey` is given.
    func encodePassword(_ metadata: StorePasswordMetadata, value: RSASecretBytes, storeKey: UnlockedStoreKey?) throws
        -> [UInt8]
    {
        if let storeKey {
            var plain = value.bytes
            defer { wipe(&plain) }
            let sealed = try storeKey.seal(plain, associatedData: metadata.associatedData)
            return try StorePasswordFile.encode(metadata, secret: sealed, sealed: true)
        }
        var plain = value.bytes
        defer { wipe(&plain) }
        return try StorePasswordFile.encode(metadata, secret: plain, sealed: false)
    }
}

/// Encoding of password item files (see ``StorePasswordMetadata``).
internal enum StorePasswordFile {
    static func encode(_ metadata: StorePasswordMetadata, secret: [UInt8], sealed: Bool) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((StorePasswordMetadata.magicLine + "\n").utf8) + Array(try encoder.encode(metadata)) + [0x0A]
            + StoreSecretLine.encode(secret, sealed: sealed)
    }

    static func decode(_ bytes: [UInt8]) throws -> (StorePasswordMetadata, Bool, [UInt8]) {
        let lines = bytes.split(separator: 0x0A, maxSplits: 3, omittingEmptySubsequences: false)
        guard lines.count >= 3, lines[0].elementsEqual(StorePasswordMetadata.magicLine.utf8) else {
            throw StoreDamage("the file does not start with \"\(StorePasswordMetadata.magicLine)\"")
        }
        guard lines.count == 4, lines[3].isEmpty else { throw StoreDamage("the file is truncated or has extra data") }
        guard let metadata = try? JSONDecoder().decode(StorePasswordMetadata.self, from: Data(lines[1])),
            metadata.format == 1
        else {
            throw StoreDamage("the metadata record is not valid")
        }
        let (sealed, secret) = try StoreSecretLine.decode(lines[2])
        return (metadata, sealed, secret)
    }
}
