import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Keys: adding pairs and public keys, changing labels, deleting, rebuilding the index.
extension RSAKeyStore {
    // MARK: Adding

    /// Store a key pair permanently: a public item under `tag` and a private item under
    /// `privateTag` (default: the same tag), like `SecKeyGeneratePair` with
    /// `kSecAttrIsPermanent` and the public and private `kSecAttrApplicationTag`s. Both items
    /// are written in one atomic step: after a crash, both or neither exist.
    ///
    /// - Parameters:
    ///   - key: the private key; its public half becomes the public item.
    ///   - tag: the application tag of the public item (1 to 255 bytes of UTF-8).
    ///   - privateTag: the application tag of the private item, if different.
    ///   - label: optional free text (at most ``maximumLabelByteCount`` bytes), on both items.
    ///   - replace: replace existing items with the same (tag, key class) instead of failing.
    /// - Returns: the attributes of the new public and private items.
    /// - Throws: `RSAError.duplicateItem` (``RSAKeychainItemQuery/key(tag:keyClass:)``) when an
    ///   item with the tag and class exists and `replace` is false (nothing is written); `RSAError.invalidTag`,
    ///   `RSAError.invalidLabel`; `RSAError.storeIOError`.
    @discardableResult
    public func addKeyPair(
        _ key: RSAPrivateKey, tag: String, privateTag: String? = nil, label: String? = nil,
        replace: Bool = false
    ) throws -> (public: RSAKeyItemAttributes, private: RSAKeyItemAttributes) {
        try addKeyPair(key, tag: tag, privateTag: privateTag, label: label, replace: replace, crashPoint: nil)
    }

    /// ``addKeyPair(_:tag:privateTag:label:replace:)``, stopping at `crashPoint` (tests).
    internal func addKeyPair(
        _ key: RSAPrivateKey, tag: String, privateTag: String?, label: String?,
        replace: Bool, crashPoint: StoreCrashPoint?
    ) throws -> (public: RSAKeyItemAttributes, private: RSAKeyItemAttributes) {
        let privateTag = privateTag ?? tag
        try RSAKeyStore.validateTag(tag)
        try RSAKeyStore.validateTag(privateTag)
        try RSAKeyStore.validateLabel(label)
        let publicPEM = key.publicKey.pemRepresentation
        let privatePEM = key.pkcs8PEMRepresentation
        let fingerprint = key.publicKey.fingerprint
        let requests = [
            NewItem(
                keyClass: .public, tag: tag, label: label, keySizeInBits: key.modulusBitCount,
                fingerprint: fingerprint, pem: publicPEM, pssRestriction: key.pssRestriction),
            NewItem(
                keyClass: .private, tag: privateTag, label: label, keySizeInBits: key.modulusBitCount,
                fingerprint: fingerprint, pem: privatePEM, privateKey: key, pssRestriction: key.pssRestriction)
        ]
        let added = try withWriteTransaction(crashPoint: crashPoint) { tx in
            try stage(requests, replace: replace, into: &tx)
        }
        return (added[0], added[1])
    }

    /// Store a public key alone (an imported public key): one public item under `tag`.
    ///
    /// - Parameters:
    ///   - key: the public key (stored as SPKI PEM).
    ///   - tag: the application tag (1 to 255 bytes of UTF-8).
    ///   - label: optional free text.
    ///   - replace: replace an existing public item with this tag instead of failing.
    /// - Returns: the new item's attributes.
    /// - Throws: `RSAError.duplicateItem` (when not replacing), `RSAError.invalidTag`,
    ///   `RSAError.invalidLabel`, `RSAError.storeIOError`.
    @discardableResult
    public func addPublicKey(
        _ key: RSAPublicKey, tag: String, label: String? = nil, replace: Bool = false
    ) throws -> RSAKeyItemAttributes {
        try addPublicKeys([(key, tag, label)], replace: replace)[0]
    }

    /// Store several public keys in one atomic step (all or none), for importing a keyring.
    ///
    /// - Parameters:
    ///   - keys: (key, application tag, label) triples; the tags must be distinct.
    ///   - replace: replace existing public items with these tags instead of failing.
    /// - Returns: the new items' attributes, in the order given.
    /// - Throws: `RSAError.duplicateItem` for the first tag that exists (when not
    ///   replacing) or appears twice in `keys`; nothing is written then.
    ///   `RSAError.invalidTag`, `RSAError.invalidLabel`, `RSAError.storeIOError`.
    @discardableResult
    public func addPublicKeys(
        _ keys: [(key: RSAPublicKey, tag: String, label: String?)], replace: Bool = false
    ) throws -> [RSAKeyItemAttributes] {
        var requests: [NewItem] = []
        requests.reserveCapacity(keys.count)
        // Keyed by the SPKI DER, not the key: keys equal in n and e may differ in restriction.
        var encodings: [[UInt8]: (RSAKeyFingerprint, String)] = [:]
        for entry in keys {
            try RSAKeyStore.validateTag(entry.tag)
            try RSAKeyStore.validateLabel(entry.label)
            let spki = entry.key.derRepresentation
            let derived: (RSAKeyFingerprint, String)
            if let known = encodings[spki] {
                derived = known
            } else {
                derived = (entry.key.fingerprint, entry.key.pemRepresentation)
                encodings[spki] = derived
            }
            requests.append(
                NewItem(
                    keyClass: .public, tag: entry.tag, label: entry.label,
                    keySizeInBits: entry.key.modulusBitCount, fingerprint: derived.0, pem: derived.1,
                    pssRestriction: entry.key.pssRestriction))
        }
        guard !requests.isEmpty else { return [] }
        return try withWriteTransaction { tx in
            try stage(requests, replace: replace, into: &tx)
        }
    }

    /// One item to write.
    struct NewItem {
        var keyClass: RSAKeyClass
        var tag: String
        var label: String?
        var keySizeInBits: Int
        var fingerprint: RSAKeyFingerprint
        var pem: String
        /// The key of a private item (sealed instead of `pem` in a protected store).
        var privateKey: RSAPrivateKey? = nil
        /// The key's RSASSA-PSS restriction, for the returned attributes.
        var pssRestriction: RSAPSSKeyRestriction? = nil
        /// Where the private key is, for a token key's private item (whose `pem` is the SPKI).
        var token: RSATokenReference? = nil
    }

    /// Plan the writes of `requests` (under the exclusive lock): duplicate checks, item
    /// files, fingerprint index entries (and removal of a replaced item's entry).
    func stage(_ requests: [NewItem], replace: Bool, into tx: inout StoreTransaction) throws -> [RSAKeyItemAttributes] {
        let milliseconds = StoreItemRecord.nowMilliseconds()
        // A protected store seals private items: it must be unlocked (public items need nothing).
        let storeKey = requests.contains { $0.keyClass == .private } ? try currentStoreKey() : nil
        var seen = Set<String>()
        var result: [RSAKeyItemAttributes] = []
        let group = accessGroupForNewItems
        if !requests.isEmpty { try registerGroup(group, in: &tx) }
        for request in requests {
            let tagHash = StoreLayout.tagHash(request.tag, group: group)
            let itemPath = StoreLayout.itemPath(request.keyClass, tagHash: tagHash)
            guard seen.insert(itemPath).inserted else {
                throw RSAError.duplicateItem(.key(tag: request.tag, keyClass: request.keyClass))
            }
            var oldEntry: String?
            if try StoreFileSystem.status(layout.absolute(itemPath)) != nil {
                guard replace else { throw RSAError.duplicateItem(.key(tag: request.tag, keyClass: request.keyClass)) }
                try checkKeyDeletable(itemPath)
                // The replaced item's index entry (unknown if its metadata is damaged: then the
                // entry stays behind, and lookups skip it because it no longer matches).
                if let old = try? readMetadata(itemPath) {
                    oldEntry = StoreLayout.fingerprintEntry(
                        fingerprintHex: old.fingerprint, tagHash: tagHash, keyClass: request.keyClass)
                }
            }
            let fingerprintHex = StoreHex.encode(request.fingerprint.bytes)
            var metadata = StoreItemMetadata(
                format: StoreItemRecord.format,
                itemID: StoreLayout.newItemID(tagHash: tagHash, keyClass: request.keyClass),
                keyClass: request.keyClass, applicationTag: request.tag, label: request.label,
                keySizeInBits: request.keySizeInBits, fingerprint: fingerprintHex,
                creationDate: StoreItemRecord.formatDate(milliseconds: milliseconds), sealed: nil,
                token: request.token, accessGroup: RSAKeyStore.recordedGroup(accessGroupForNewItems))
            metadata.sealed = nil
            var contents: [UInt8]
            if let storeKey, let key = request.privateKey {
                contents = try encodeKeyItem(metadata, privateKey: key, publicKey: key.publicKey, storeKey: storeKey)
            } else {
                contents = try StoreItemRecord.encode(metadata, pem: request.pem)
            }
            defer { wipe(&contents) }
            try tx.stageFile(itemPath, contents: contents)
            let entry = StoreLayout.fingerprintEntry(
                fingerprintHex: fingerprintHex, tagHash: tagHash, keyClass: request.keyClass)
            try tx.createEmpty(entry)
            if let oldEntry, oldEntry != entry { tx.remove(oldEntry) }
            var attributes = RSAKeyItemAttributes(
                keyClass: request.keyClass, applicationTag: request.tag, label: request.label,
                keySizeInBits: request.keySizeInBits, fingerprint: request.fingerprint,
                creationDate: StoreItemRecord.date(milliseconds: milliseconds), itemID: metadata.itemID,
                pssRestriction: request.pssRestriction, token: request.token)
            attributes.accessGroup = accessGroupForNewItems
            result.append(attributes)
        }
        return result
    }

    // MARK: Changing and deleting

    /// Change the label of the key items under `tag` (of `keyClass`, or of both classes when
    /// nil), as `SecItemUpdate` with `kSecClassKey`, `kSecAttrApplicationTag` and a new
    /// `kSecAttrLabel`. Item ids, creation dates and keys stay the same. Only updates: a
    /// missing item is not created.
    ///
    /// - Parameters:
    ///   - tag: the application tag of the items.
    ///   - keyClass: the class to change, or nil for both.
    ///   - label: the new label, or nil (or "", as for passwords) to remove it: a key's only
    ///     changeable attribute, so nil does not mean "leave as it is" here.
    /// - Returns: the updated attributes (public before private).
    /// - Throws: `RSAError.itemNotFound` (this tag and `keyClass`) when no such item exists; `RSAError.damagedItem`
    ///   when one is damaged (nothing is changed then); `RSAError.invalidTag`,
    ///   `RSAError.invalidLabel`, `RSAError.insecureStorePermissions`, `RSAError.storeIOError`.
    @discardableResult
    public func updateKey(tag: String, keyClass: RSAKeyClass? = nil, label: String?) throws -> [RSAKeyItemAttributes] {
        try RSAKeyStore.validateTag(tag)
        try RSAKeyStore.validateLabel(label)
        let label = label?.isEmpty == true ? nil : label
        return try withWriteTransaction { tx in
            var updated: [RSAKeyItemAttributes] = []
            for candidate in keyClass.map({ [$0] }) ?? RSAKeyClass.allCases {
                let tagHash = try resolveKey(tag: tag, candidate)
                guard let loaded = try loadItem(candidate, tagHash: tagHash, knownTag: tag, anyGroup: true) else {
                    continue
                }
                try checkWritable(loaded.attributes.accessGroup)
                var metadata = loaded.metadata
                metadata.label = label
                var contents = try StoreItemRecord.encode(metadata, pem: loaded.pem)
                defer { wipe(&contents) }
                try tx.stageFile(StoreLayout.itemPath(candidate, tagHash: tagHash), contents: contents)
                let a = loaded.attributes
                var changed = RSAKeyItemAttributes(
                    keyClass: a.keyClass, applicationTag: a.applicationTag, label: label,
                    keySizeInBits: a.keySizeInBits, fingerprint: a.fingerprint,
                    creationDate: a.creationDate, itemID: a.itemID, pssRestriction: a.pssRestriction, token: a.token)
                changed.accessGroup = a.accessGroup
                updated.append(changed)
            }
            guard !updated.isEmpty else { throw RSAError.itemNotFound(.key(tag: tag, keyClass: keyClass)) }
            return updated
        }
    }

    /// Delete the key items under `tag`: the one of `keyClass`, or both when nil (as
    /// `SecItemDelete` with `kSecClassKey`, `kSecAttrApplicationTag`, and with or without
    /// `kSecAttrKeyClass`). Damaged items are deleted too.
    ///
    /// - Throws: `RSAError.itemNotFound` (this tag and `keyClass`) when no item matches (nothing is deleted);
    ///   `RSAError.invalidTag`; `RSAError.storeIOError`.
    public func deleteKey(tag: String, keyClass: RSAKeyClass? = nil) throws {
        try RSAKeyStore.validateTag(tag)
        try withWriteTransaction { tx in
            for candidate in keyClass.map({ [$0] }) ?? RSAKeyClass.allCases {
                let tagHash = try resolveKey(tag: tag, candidate)
                let itemPath = StoreLayout.itemPath(candidate, tagHash: tagHash)
                guard try StoreFileSystem.status(layout.absolute(itemPath)) != nil else { continue }
                try checkKeyDeletable(itemPath)
                tx.remove(itemPath)
                if let old = try? readMetadata(itemPath) {
                    tx.remove(
                        StoreLayout.fingerprintEntry(
                            fingerprintHex: old.fingerprint, tagHash: tagHash, keyClass: candidate))
                }
            }
            guard !tx.isEmpty else { throw RSAError.itemNotFound(.key(tag: tag, keyClass: keyClass)) }
        }
    }

    /// Rebuild the fingerprint index from the item files: add missing entries, remove entries
    /// that name no item or the wrong fingerprint, and the same for the certificate indexes and
    /// the access group registry (which lets a store opened without groups find items of other
    /// groups by name). Needed only if index/ was damaged or removed by hand; every write keeps
    /// it current.
    ///
    /// - Returns: how many entries were added and removed.
    /// - Throws: `RSAError.storeIOError`.
    @discardableResult
    public func rebuildIndex() throws -> (added: Int, removed: Int) {
        try withWriteTransaction { tx in
            var wanted = Set<String>()
            var groups = Set<String>()
            for keyClass in RSAKeyClass.allCases {
                let classFolder = StoreLayout.classDirectory(keyClass)
                for shard in try StoreFileSystem.listDirectory(layout.absolute(classFolder))
                where StoreLayout.isShardName(shard) {
                    for name in try StoreFileSystem.listDirectory(layout.absolute(classFolder + "/" + shard)) {
                        guard let tagHash = StoreLayout.tagHash(fromItemName: name),
                            let loaded = try? loadItem(keyClass, tagHash: tagHash, knownTag: nil, anyGroup: true)
                        else { continue }
                        wanted.insert(
                            StoreLayout.fingerprintEntry(
                                fingerprintHex: loaded.metadata.fingerprint, tagHash: tagHash, keyClass: keyClass))
                        groups.insert(loaded.attributes.accessGroup)
                    }
                }
            }
            var present = Set<String>()
            // Certificates: label, certificate fingerprint and public-key fingerprint entries.
            for hash in try certificateFileHashes() {
                guard let loaded = try? loadCertificate(hash: hash, anyGroup: true) else { continue }
                wanted.formUnion(RSAKeyStore.indexEntries(loaded.metadata, hash: hash))
                groups.insert(loaded.attributes.accessGroup)
            }
            for hash in try passwordFileHashes() {
                guard let loaded = try? loadPassword(hash: hash, anyGroup: true) else { continue }
                groups.insert(loaded.attributes.accessGroup)
            }
            // The group registry: one entry per group that holds an item.
            groups.remove(RSAKeyStore.defaultAccessGroup)
            wanted.formUnion(groups.map(StoreLayout.groupEntry))
            for name in try StoreFileSystem.listDirectory(layout.absolute(StoreLayout.groupIndexDirectory))
            where !name.hasPrefix(StoreFileSystem.temporaryPrefix) {
                present.insert(StoreLayout.groupEntry(name))
            }
            for indexFolder in [
                StoreLayout.fingerprintIndexDirectory, StoreLayout.labelIndexDirectory,
                StoreLayout.certificateIndexDirectory
            ] {
                for shard in try StoreFileSystem.listDirectory(layout.absolute(indexFolder))
                where StoreLayout.isShardName(shard) {
                    for name in try StoreFileSystem.listDirectory(layout.absolute(indexFolder + "/" + shard)) {
                        present.insert(indexFolder + "/" + shard + "/" + name)
                    }
                }
            }
            let missing = wanted.subtracting(present).sorted()
            let extra = present.subtracting(wanted).filter {
                !StoreFileSystem.baseName($0).hasPrefix(StoreFileSystem.temporaryPrefix)
            }.sorted()
            for entry in missing { try tx.createEmpty(entry) }
            for entry in extra { tx.remove(entry) }
            return (missing.count, extra.count)
        }
    }
}
