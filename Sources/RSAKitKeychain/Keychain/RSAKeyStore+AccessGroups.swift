import RSAKitCore

// Access groups (Apple's kSecAttrAccessGroup): every key, certificate and password item
// belongs to one group, recorded in its metadata ("accessGroup", absent for the default
// group, so items written without groups stay byte for byte as before and older stores read
// as group "default"). A store opened with groups sees only those groups and writes only
// into them. This filters inside one process: it is no boundary against another program of
// the same user, which can read the files directly.
//
// Uniqueness is per group, as Apple's: an item file is named by a hash of its unique
// attributes qualified by its group (StoreLayout.groupQualified; unqualified for the default
// group, so default items keep the names they always had). A lookup by name tries the file
// name of each group it may see (``lookupGroups()``): a store opened with groups tries them
// in order and the first that holds the name wins; a store opened without groups tries the
// default group and every group of the registry (index/group) and refuses a name held by two
// (``resolveName(_:hash:path:)``).
extension RSAKeyStore {
    /// The group of items that have none: every item of a store written before access groups,
    /// and every item added through a store opened without groups.
    public static let defaultAccessGroup = "default"
    /// The longest access group name, in bytes.
    public static let maximumAccessGroupByteCount = 128

    /// Check an access group name: 1 to ``maximumAccessGroupByteCount`` ASCII letters,
    /// digits, '-', '_' and '.', starting with a letter or digit, with no ".." and no
    /// trailing '.', as reverse-DNS names ("com.example.mail") are. Nothing that could be a
    /// path (no '/', no "." or "..") is accepted.
    ///
    /// - Throws: `RSAError.invalidAttribute` saying what is wrong.
    public static func validateAccessGroup(_ group: String) throws {
        let bytes = Array(group.utf8)
        func refuse(_ why: String) -> RSAError {
            .invalidAttribute(reason: "the access group \"\(group)\" \(why)")
        }
        guard !bytes.isEmpty else { throw RSAError.invalidAttribute(reason: "the access group is empty") }
        guard bytes.count <= maximumAccessGroupByteCount else {
            throw refuse("is \(bytes.count) bytes; at most \(maximumAccessGroupByteCount) are allowed")
        }
        func isAlphanumeric(_ b: UInt8) -> Bool {
            (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
        }
        guard bytes.allSatisfy({ isAlphanumeric($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E }) else {
            throw refuse(
                "may hold only letters, digits, '-', '_' and '.' (a reverse-DNS name such as com.example.mail)")
        }
        guard isAlphanumeric(bytes[0]), bytes.last != 0x2E, !group.contains("..") else {
            throw refuse("must start with a letter or digit, not end with '.', and hold no \"..\"")
        }
    }

    /// Whether an item of `group` is visible through this store object.
    func isVisible(_ group: String) -> Bool {
        accessGroups?.contains(group) ?? true
    }

    /// The group new items go into: the first group the store was opened with, else
    /// ``defaultAccessGroup``.
    public var accessGroupForNewItems: String {
        accessGroups?.first ?? RSAKeyStore.defaultAccessGroup
    }

    /// Refuse to change or remove an item of `group` unless the store was opened with it.
    ///
    /// - Throws: `RSAError.accessGroupNotAllowed`.
    func checkWritable(_ group: String) throws {
        guard let accessGroups, !accessGroups.contains(group) else { return }
        throw RSAError.accessGroupNotAllowed(group: group, allowed: accessGroups)
    }

    /// The group as a record stores it: nil for the default group.
    static func recordedGroup(_ group: String) -> String? {
        group == defaultAccessGroup ? nil : group
    }

    /// The group of a record's value (nil reads as the default group), or nil when the
    /// recorded name is not a valid group name (the item is then reported as damaged).
    static func checkedGroup(_ recorded: String?) -> String? {
        guard let recorded else { return defaultAccessGroup }
        return (try? validateAccessGroup(recorded)) == nil ? nil : recorded
    }

    /// Check the groups a store is opened with: at least one, each valid, none twice.
    ///
    /// - Throws: `RSAError.invalidAttribute`.
    static func validateAccessGroups(_ groups: [String]) throws {
        guard !groups.isEmpty else {
            throw RSAError.invalidAttribute(
                reason: "no access group given (open the store without groups to see every group)")
        }
        var seen = Set<String>()
        for group in groups {
            try validateAccessGroup(group)
            guard seen.insert(group).inserted else {
                throw RSAError.invalidAttribute(reason: "the access group \"\(group)\" is given twice")
            }
        }
    }

    /// Refuse to replace or delete the key item file at `itemPath` (relative) when this store
    /// was opened with groups and the item belongs to another one, or its record cannot be
    /// read (its group is then unknown: a store opened without groups deletes it).
    ///
    /// - Throws: `RSAError.accessGroupNotAllowed`, `RSAError.damagedItem`.
    func checkKeyDeletable(_ itemPath: String) throws {
        guard accessGroups != nil else { return }
        let metadata: StoreItemMetadata
        do {
            metadata = try readMetadata(itemPath)
        } catch let damage as StoreDamage {
            throw RSAError.damagedItem(tag: nil, path: layout.absolute(itemPath), reason: damage.reason)
        }
        guard let group = RSAKeyStore.checkedGroup(metadata.accessGroup) else {
            throw RSAError.damagedItem(
                tag: metadata.applicationTag, path: layout.absolute(itemPath),
                reason: "the access group is not a valid group name")
        }
        try checkWritable(group)
    }

    // MARK: Names per group

    /// The groups a lookup by name tries, in order: the groups the store was opened with, or,
    /// for a store opened without groups, the default group and then every group of the
    /// registry (``StoreLayout/groupIndexDirectory``), sorted by name. Call under a lock.
    ///
    /// - Throws: `RSAError.storeIOError` when the registry cannot be listed.
    func lookupGroups() throws -> [String] {
        if let accessGroups { return accessGroups }
        let registered = try StoreFileSystem.listDirectory(layout.absolute(StoreLayout.groupIndexDirectory))
            .filter { $0 != RSAKeyStore.defaultAccessGroup && (try? RSAKeyStore.validateAccessGroup($0)) != nil }
        return [RSAKeyStore.defaultAccessGroup] + registered.sorted()
    }

    /// The file hash a lookup by name resolves to: of the first group (in ``lookupGroups()``
    /// order) whose file for the name exists, damaged or not; of the first group tried when
    /// none exists (so the caller finds no file and reports the item as not found). Call under
    /// a lock.
    ///
    /// - Parameters:
    ///   - query: the item looked for, for the error.
    ///   - hash: the file hash of the name in a group.
    ///   - path: the file (relative) of a hash.
    /// - Throws: `RSAError.ambiguousItem` when the store was opened without groups and the name
    ///   exists in more than one group; `RSAError.storeIOError`.
    func resolveName(
        _ query: RSAKeychainItemQuery, hash: (String) -> String, path: (String) -> String
    ) throws -> String {
        let groups = try lookupGroups()
        var found: [(group: String, hash: String)] = []
        for group in groups {
            let candidate = hash(group)
            guard try StoreFileSystem.status(layout.absolute(path(candidate))) != nil else { continue }
            found.append((group, candidate))
            // Groups given in order: the first that holds the name wins.
            if accessGroups != nil { break }
        }
        guard found.count <= 1 else {
            throw RSAError.ambiguousItem(query, accessGroups: found.map(\.group).sorted())
        }
        return found.first?.hash ?? hash(groups[0])
    }

    /// Record `group` in the group registry within `tx` (nothing for the default group, whose
    /// names need no registry): every write that adds an item calls it with the item's group.
    func registerGroup(_ group: String, in tx: inout StoreTransaction) throws {
        guard group != RSAKeyStore.defaultAccessGroup else { return }
        try tx.createEmpty(StoreLayout.groupEntry(group))
    }
}
