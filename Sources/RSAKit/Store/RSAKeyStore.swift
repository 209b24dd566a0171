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

/// A directory of permanent RSA keys found by application tag: the rsakit analogue of the
/// keychain items that `SecKeyGeneratePair` makes with `kSecAttrIsPermanent` and
/// `kSecAttrApplicationTag`, and that `SecItemCopyMatching` finds by key class, tag and key
/// type.
///
/// Each item is one key (public or private) with its attributes
/// (``RSAKeyItemAttributes``). An item is one file named after the SHA-256 of its tag, so a
/// lookup by tag opens one file whatever the size of the store. Private items are PKCS#8
/// PEM, public items SPKI PEM, each after a one-line metadata record: `openssl pkey -in`
/// reads an item file directly. The layout is described in README.md, "Key store".
///
/// Safety on disk:
/// - folders are created 0700 and files 0600 (with `O_CREAT | O_EXCL`, never wider first);
///   opening a store whose folders or private item files are open to group or others throws
///   `RSAError.insecureStorePermissions` unless `allowInsecurePermissions` is true;
/// - every write is atomic and durable (temporary file in the same folder, fsync, rename,
///   fsync of the folder), and multi-file writes (a key pair, a replacement) go through a
///   redo journal: after a crash or `kill -9` the store holds the old state or the new one,
///   never half an item or half a pair;
/// - writers are serialised by an exclusive `flock(2)` on the store's lock file and readers
///   take a shared lock, across threads and processes alike;
/// - a damaged item is reported (``RSAError/damagedItem(tag:path:reason:)``) and the rest of
///   the store stays usable.
///
/// The object holds no mutable state and may be used from several threads at once.
/// The store relies on POSIX rename and flock semantics of a local file system; network file
/// systems without working `flock` are not supported.
public final class RSAKeyStore: Sendable {
    /// The longest application tag, in bytes of UTF-8.
    public static let maximumTagByteCount = 255
    /// The longest label, in bytes of UTF-8.
    public static let maximumLabelByteCount = 4096

    /// The store folder (absolute path, no trailing "/").
    public let path: String
    /// Whether the store was opened with `allowInsecurePermissions: true`.
    public let allowsInsecurePermissions: Bool
    /// The `RSAError.insecureStorePermissions` findings of the check made on opening
    /// (always empty unless `allowInsecurePermissions` was true, since otherwise the first
    /// finding is thrown).
    public let permissionWarnings: [RSAError]

    internal let layout: StoreLayout

    // MARK: Location

    /// The store folder used when no path is given: `$RSAKIT_STORE` if set and not empty,
    /// else `$XDG_DATA_HOME/rsakit` if `XDG_DATA_HOME` is an absolute path, else
    /// `$HOME/.local/share/rsakit` (HOME from the environment, else the password database).
    ///
    /// - Parameter environment: the variables to consult (default: this process's).
    /// - Returns: the folder path (made absolute against the current folder if relative).
    /// - Throws: `RSAError.storeIOError` when none of these gives a folder.
    public static func defaultLocation(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String {
        if let explicit = environment["RSAKIT_STORE"], !explicit.isEmpty {
            return absolutePath(explicit)
        }
        // XDG Base Directory: a relative XDG_DATA_HOME is invalid and ignored.
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return normalised(data) + "/rsakit"
        }
        var home = environment["HOME"] ?? ""
        if home.isEmpty, let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir {
            home = String(cString: dir)
        }
        guard !home.isEmpty else {
            throw RSAError.storeIOError(
                path: "~/.local/share/rsakit",
                reason: "no store location: RSAKIT_STORE, XDG_DATA_HOME and HOME are unset")
        }
        return normalised(absolutePath(home)) + "/.local/share/rsakit"
    }

    // MARK: Opening

    /// Open the store at `path` (default ``defaultLocation(environment:)``), creating it
    /// if it does not exist: missing folders (and missing parent folders) are made with mode
    /// 0700; an existing empty folder of this user is tightened to 0700 (see
    /// ``init(url:allowInsecurePermissions:)``).
    ///
    /// Opening checks that the store folders and every private item file give no access to
    /// group or others, applies the journal of a write interrupted after its commit point, and
    /// removes temporary files left by interrupted writes in the store folder and the private
    /// folders (those in public folders go at the next write into their folder or the next
    /// ``allItems()``; they are ignored meanwhile). Its cost grows with the number of private
    /// items (one lstat each); public items are not listed.
    ///
    /// - Parameters:
    ///   - path: the store folder, or nil for the default location.
    ///   - allowInsecurePermissions: go on (recording ``permissionWarnings``) when folders
    ///     or private item files are accessible by group or others.
    /// - Throws: `RSAError.insecureStorePermissions(path:mode:)` for the first folder or
    ///   private item file with group or other bits (unless allowed);
    ///   `RSAError.storeIOError` when the folder cannot be created or read, exists and is not
    ///   an rsakit store, or its format is unknown.
    public init(path: String? = nil, allowInsecurePermissions: Bool = false) throws {
        let chosen = try path ?? RSAKeyStore.defaultLocation()
        guard !chosen.isEmpty else {
            throw RSAError.storeIOError(path: chosen, reason: "the store path is empty")
        }
        let root = RSAKeyStore.normalised(RSAKeyStore.absolutePath(chosen))
        let layout = StoreLayout(root: root)
        self.path = root
        self.layout = layout
        self.allowsInsecurePermissions = allowInsecurePermissions
        try RSAKeyStore.tightenIfEmptyFolder(root)  // a FileManager-made folder (RSAKeyStore+App.swift)
        try RSAKeyStore.prepare(layout)
        self.permissionWarnings = try RSAKeyStore.checkAndClean(
            layout, allowInsecurePermissions: allowInsecurePermissions)
    }

    /// Create the folders, lock file and VERSION file that are missing; refuse a non-empty
    /// folder that is not a store and a store of another format.
    private static func prepare(_ layout: StoreLayout) throws {
        try makeDirectories(layout.root)
        if let version = try StoreFileSystem.readFile(layout.versionPath, maximumByteCount: 256) {
            guard version.bytes.elementsEqual(StoreLayout.versionText.utf8) else {
                throw RSAError.storeIOError(
                    path: layout.versionPath,
                    reason: "unsupported store format \"\(String(decoding: version.bytes, as: UTF8.self).trimmingNewlines)\"")
            }
            try createLockFile(layout)
            return
        }
        let ours: Set<String> = [
            StoreLayout.lockName, StoreLayout.journalName, StoreLayout.indexDirectory,
            RSAKeyClass.public.rawValue, RSAKeyClass.private.rawValue,
        ]
        let foreign = try StoreFileSystem.listDirectory(layout.root).filter {
            !ours.contains($0) && !$0.hasPrefix(StoreFileSystem.temporaryPrefix)
                && !RSAKeyStore.isNestedApplicationStore(layout, $0)
        }
        guard foreign.isEmpty else {
            throw RSAError.storeIOError(
                path: layout.root,
                reason: "the folder is not empty and is not an rsakit key store (no VERSION file)")
        }
        try createLockFile(layout)
        let lock = try StoreLock(path: layout.lockPath, exclusive: true)
        defer { lock.release() }
        for folder in [RSAKeyClass.public.rawValue, RSAKeyClass.private.rawValue,
                       StoreLayout.indexDirectory, StoreLayout.fingerprintIndexDirectory] {
            try StoreFileSystem.makeDirectory(layout.absolute(folder))
        }
        if try StoreFileSystem.status(layout.versionPath) == nil {
            let temporary = layout.absolute(StoreFileSystem.temporaryName(for: StoreLayout.versionName))
            try StoreFileSystem.createFile(temporary, contents: Array(StoreLayout.versionText.utf8))
            try StoreFileSystem.renameFile(temporary, layout.versionPath)
            try StoreFileSystem.syncDirectory(layout.root)
        }
    }

    /// mkdir -p with mode 0700 for each folder created.
    private static func makeDirectories(_ path: String) throws {
        if let st = try StoreFileSystem.status(path) {
            guard StoreFileSystem.isDirectory(st) else {
                throw RSAError.storeIOError(path: path, reason: "exists and is not a folder")
            }
            return
        }
        let parent = StoreFileSystem.parent(of: path)
        if parent != path { try makeDirectories(parent) }
        try StoreFileSystem.makeDirectory(path)
    }

    /// Create the lock file (0600) if it does not exist.
    private static func createLockFile(_ layout: StoreLayout) throws {
        if try StoreFileSystem.status(layout.lockPath) != nil { return }
        let fd = open(layout.lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, StoreFileSystem.fileMode)
        guard fd >= 0 else { throw StoreFileSystem.ioError("open", layout.lockPath) }
        fchmod(fd, StoreFileSystem.fileMode)
        close(fd)
        try StoreFileSystem.syncDirectory(layout.root)
    }

    /// The check made on opening: permissions of folders and private item files (the
    /// private files are stat'ed, public ones only listed), stale temporary files, journal.
    private static func checkAndClean(_ layout: StoreLayout, allowInsecurePermissions: Bool) throws -> [RSAError] {
        var warnings: [RSAError] = []
        func check(_ path: String, _ st: stat) throws {
            let mode = StoreFileSystem.permissions(st)
            if mode & UInt32(StoreFileSystem.groupOtherBits) != 0 {
                let finding = RSAError.insecureStorePermissions(path: path, mode: mode)
                guard allowInsecurePermissions else { throw finding }
                warnings.append(finding)
            }
        }
        func checkFolder(_ path: String) throws {
            guard let st = try StoreFileSystem.status(path) else { return }
            guard StoreFileSystem.isDirectory(st) else {
                throw RSAError.storeIOError(path: path, reason: "exists and is not a folder")
            }
            try check(path, st)
        }
        try checkFolder(layout.root)
        for folder in [StoreLayout.indexDirectory, StoreLayout.fingerprintIndexDirectory] {
            try checkFolder(layout.absolute(folder))
        }
        var stale: [String] = try StoreFileSystem.listDirectory(layout.root)
            .filter { $0.hasPrefix(StoreFileSystem.temporaryPrefix) }
            .map { layout.absolute($0) }
        for keyClass in RSAKeyClass.allCases {
            let classFolder = layout.absolute(StoreLayout.classDirectory(keyClass))
            try checkFolder(classFolder)
            for shard in try StoreFileSystem.listDirectory(classFolder).sorted() where StoreLayout.isShardName(shard) {
                let shardFolder = classFolder + "/" + shard
                try checkFolder(shardFolder)
                // Public item files are not listed here, so that opening a store of many public
                // keys stays cheap; their folders' stale temporary files go at the next write
                // into the folder or the next allItems().
                guard keyClass == .private else { continue }
                let temporaryPrefix = Array(StoreFileSystem.temporaryPrefix.utf8CString.dropLast())
                try StoreFileSystem.forEachEntryStatus(shardFolder) { name, st in
                    // Names are C strings here; a Swift String is made only for the rare report.
                    if strncmp(name, temporaryPrefix, temporaryPrefix.count) == 0 {
                        stale.append(shardFolder + "/" + String(cString: name))
                    } else if StoreFileSystem.permissions(st) & UInt32(StoreFileSystem.groupOtherBits) != 0 {
                        try check(shardFolder + "/" + String(cString: name), st)
                    }
                }
            }
        }
        let fingerprintFolder = layout.absolute(StoreLayout.fingerprintIndexDirectory)
        for shard in try StoreFileSystem.listDirectory(fingerprintFolder) where StoreLayout.isShardName(shard) {
            try checkFolder(fingerprintFolder + "/" + shard)
        }
        let journalLeft = try StoreFileSystem.status(layout.journalPath) != nil
        if !stale.isEmpty || journalLeft {
            // Under the exclusive lock no write is in progress: after the journal is applied,
            // every temporary file still present belongs to a write that died before its
            // commit point.
            let lock = try StoreLock(path: layout.lockPath, exclusive: true)
            defer { lock.release() }
            try StoreTransaction.recover(layout: layout)
            for file in stale {
                try StoreFileSystem.removeFile(file)
            }
        }
        return warnings
    }

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
    /// - Throws: `RSAError.keyAlreadyExists(tag:)` when an item with the tag and class exists
    ///   and `replace` is false (nothing is written); `RSAError.invalidTag`,
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
            NewItem(keyClass: .public, tag: tag, label: label, keySizeInBits: key.modulusBitCount,
                    fingerprint: fingerprint, pem: publicPEM),
            NewItem(keyClass: .private, tag: privateTag, label: label, keySizeInBits: key.modulusBitCount,
                    fingerprint: fingerprint, pem: privatePEM),
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
    /// - Throws: `RSAError.keyAlreadyExists(tag:)` (when not replacing), `RSAError.invalidTag`,
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
    /// - Throws: `RSAError.keyAlreadyExists(tag:)` for the first tag that exists (when not
    ///   replacing) or appears twice in `keys`; nothing is written then.
    ///   `RSAError.invalidTag`, `RSAError.invalidLabel`, `RSAError.storeIOError`.
    @discardableResult
    public func addPublicKeys(
        _ keys: [(key: RSAPublicKey, tag: String, label: String?)], replace: Bool = false
    ) throws -> [RSAKeyItemAttributes] {
        var requests: [NewItem] = []
        requests.reserveCapacity(keys.count)
        var fingerprints: [RSAPublicKey: (RSAKeyFingerprint, String)] = [:]
        for entry in keys {
            try RSAKeyStore.validateTag(entry.tag)
            try RSAKeyStore.validateLabel(entry.label)
            let derived: (RSAKeyFingerprint, String)
            if let known = fingerprints[entry.key] {
                derived = known
            } else {
                derived = (entry.key.fingerprint, entry.key.pemRepresentation)
                fingerprints[entry.key] = derived
            }
            requests.append(NewItem(
                keyClass: .public, tag: entry.tag, label: entry.label,
                keySizeInBits: entry.key.modulusBitCount, fingerprint: derived.0, pem: derived.1))
        }
        guard !requests.isEmpty else { return [] }
        return try withWriteTransaction { tx in
            try stage(requests, replace: replace, into: &tx)
        }
    }

    /// One item to write.
    private struct NewItem {
        var keyClass: RSAKeyClass
        var tag: String
        var label: String?
        var keySizeInBits: Int
        var fingerprint: RSAKeyFingerprint
        var pem: String
    }

    /// Plan the writes of `requests` (under the exclusive lock): duplicate checks, item
    /// files, fingerprint index entries (and removal of a replaced item's entry).
    private func stage(_ requests: [NewItem], replace: Bool, into tx: inout StoreTransaction) throws -> [RSAKeyItemAttributes] {
        let milliseconds = StoreItemRecord.nowMilliseconds()
        var seen = Set<String>()
        var result: [RSAKeyItemAttributes] = []
        for request in requests {
            let tagHash = StoreLayout.tagHash(request.tag)
            let itemPath = StoreLayout.itemPath(request.keyClass, tagHash: tagHash)
            guard seen.insert(itemPath).inserted else {
                throw RSAError.keyAlreadyExists(tag: request.tag)
            }
            var oldEntry: String?
            if try StoreFileSystem.status(layout.absolute(itemPath)) != nil {
                guard replace else { throw RSAError.keyAlreadyExists(tag: request.tag) }
                // The replaced item's index entry (unknown if its metadata is damaged: then the
                // entry stays behind, and lookups skip it because it no longer matches).
                if let old = try? readMetadata(itemPath) {
                    oldEntry = StoreLayout.fingerprintEntry(
                        fingerprintHex: old.fingerprint, tagHash: tagHash, keyClass: request.keyClass)
                }
            }
            let fingerprintHex = StoreHex.encode(request.fingerprint.bytes)
            let metadata = StoreItemMetadata(
                format: StoreItemRecord.format,
                itemID: StoreLayout.newItemID(tagHash: tagHash, keyClass: request.keyClass),
                keyClass: request.keyClass, applicationTag: request.tag, label: request.label,
                keySizeInBits: request.keySizeInBits, fingerprint: fingerprintHex,
                creationDate: StoreItemRecord.formatDate(milliseconds: milliseconds))
            var contents = try StoreItemRecord.encode(metadata, pem: request.pem)
            defer { wipe(&contents) }
            try tx.stageFile(itemPath, contents: contents)
            let entry = StoreLayout.fingerprintEntry(
                fingerprintHex: fingerprintHex, tagHash: tagHash, keyClass: request.keyClass)
            try tx.createEmpty(entry)
            if let oldEntry, oldEntry != entry { tx.remove(oldEntry) }
            result.append(RSAKeyItemAttributes(
                keyClass: request.keyClass, applicationTag: request.tag, label: request.label,
                keySizeInBits: request.keySizeInBits, fingerprint: request.fingerprint,
                creationDate: StoreItemRecord.date(milliseconds: milliseconds), itemID: metadata.itemID))
        }
        return result
    }

    // MARK: Finding

    /// The public key stored under `tag` (class public), as `SecItemCopyMatching` with
    /// `kSecAttrKeyClassPublic` and `kSecReturnRef` finds it. Opens one file.
    ///
    /// - Throws: `RSAError.keyNotFound(tag:)`; `RSAError.damagedItem` when the item file is
    ///   damaged; `RSAError.invalidTag`; `RSAError.storeIOError`.
    public func publicKey(tag: String) throws -> RSAPublicKey {
        try loadByTag(tag, .public).publicKey
    }

    /// The private key stored under `tag` (class private). Opens one file.
    ///
    /// - Throws: `RSAError.keyNotFound(tag:)`; `RSAError.damagedItem`;
    ///   `RSAError.insecureStorePermissions` when the file is readable by group or others
    ///   (unless the store was opened with `allowInsecurePermissions`); `RSAError.invalidTag`;
    ///   `RSAError.storeIOError`.
    public func privateKey(tag: String) throws -> RSAPrivateKey {
        // A private item always yields its key (loadItem parses it).
        try loadByTag(tag, .private).privateKey!
    }

    /// The attributes of the item with this tag and key class. Opens one file.
    ///
    /// - Throws: as ``privateKey(tag:)``.
    public func item(tag: String, keyClass: RSAKeyClass) throws -> RSAKeyItemAttributes {
        try loadByTag(tag, keyClass).attributes
    }

    /// The attributes of the item with this item id (the persistent-reference analogue).
    /// Opens one file: the id names its item's file.
    ///
    /// - Throws: `RSAError.itemNotFound(itemID:)` when no item has this id (including ids of
    ///   items since replaced or deleted, and strings that are not item ids);
    ///   `RSAError.damagedItem`; `RSAError.insecureStorePermissions`; `RSAError.storeIOError`.
    public func item(id: String) throws -> RSAKeyItemAttributes {
        guard let (tagHash, keyClass) = StoreLayout.parseItemID(id) else {
            throw RSAError.itemNotFound(itemID: id)
        }
        let loaded = try withReadLock {
            try loadItem(keyClass, tagHash: tagHash, knownTag: nil)
        }
        guard let loaded, loaded.attributes.itemID == id else {
            throw RSAError.itemNotFound(itemID: id)
        }
        return loaded.attributes
    }

    /// Every item whose key has this fingerprint (both halves of a pair, and the same key
    /// stored under several tags), sorted by tag then class. Uses the fingerprint index: one
    /// index folder is listed, and each match is read and checked. Damaged items are left
    /// out (``allItems()`` reports them).
    ///
    /// - Returns: the matching items, possibly none.
    /// - Throws: `RSAError.storeIOError`.
    public func items(fingerprint: RSAKeyFingerprint) throws -> [RSAKeyItemAttributes] {
        let fingerprintHex = StoreHex.encode(fingerprint.bytes)
        let found: [RSAKeyItemAttributes] = try withReadLock {
            var found: [RSAKeyItemAttributes] = []
            let shard = layout.absolute(StoreLayout.fingerprintShard(fingerprintHex))
            for name in try StoreFileSystem.listDirectory(shard) {
                guard let entry = StoreLayout.parseFingerprintEntry(name),
                      entry.fingerprintHex == fingerprintHex else { continue }
                guard let loaded = try? loadItem(entry.keyClass, tagHash: entry.tagHash, knownTag: nil),
                      loaded.attributes.fingerprint == fingerprint else { continue }
                found.append(loaded.attributes)
            }
            return found
        }
        return RSAKeyStore.sorted(found)
    }

    /// Every item with its attributes, and every item file that could not be read (listed,
    /// not thrown: one damaged item does not hide the others). Reads every item file, and
    /// removes the temporary files of interrupted writes it meets.
    ///
    /// - Throws: `RSAError.storeIOError` when a store folder cannot be listed.
    public func allItems() throws -> RSAKeyStoreListing {
        try withReadLock {
            var items: [RSAKeyItemAttributes] = []
            var problems: [RSAKeyStoreProblem] = []
            for keyClass in RSAKeyClass.allCases {
                let classFolder = StoreLayout.classDirectory(keyClass)
                for shard in try StoreFileSystem.listDirectory(layout.absolute(classFolder)) where StoreLayout.isShardName(shard) {
                    for name in try StoreFileSystem.listDirectory(layout.absolute(classFolder + "/" + shard)) {
                        if name.hasPrefix(StoreFileSystem.temporaryPrefix) {
                            // Under the shared lock no write is in progress, and a journal
                            // naming temporary files was applied by withReadLock: this one was
                            // left by a write that died before its commit point. (Best effort:
                            // a read-only store keeps it, and it is ignored.)
                            _ = try? StoreFileSystem.removeFile(layout.absolute(classFolder + "/" + shard + "/" + name))
                            continue
                        }
                        guard let tagHash = StoreLayout.tagHash(fromItemName: name), name.hasPrefix(shard) else {
                            continue  // anything not ours
                        }
                        do {
                            if let loaded = try loadItem(keyClass, tagHash: tagHash, knownTag: nil) {
                                items.append(loaded.attributes)
                            }
                        } catch let error as RSAError {
                            problems.append(RSAKeyStoreProblem(
                                path: layout.absolute(StoreLayout.itemPath(keyClass, tagHash: tagHash)),
                                error: error))
                        }
                    }
                }
            }
            return RSAKeyStoreListing(
                items: RSAKeyStore.sorted(items), problems: problems.sorted { $0.path < $1.path })
        }
    }

    // MARK: Changing and deleting

    /// Change the label of the items under `tag` (of `keyClass`, or of both classes when nil).
    /// Item ids, creation dates and keys stay the same.
    ///
    /// - Parameters:
    ///   - label: the new label, or nil to remove it.
    /// - Returns: the updated attributes (public before private).
    /// - Throws: `RSAError.keyNotFound(tag:)` when no such item exists; `RSAError.damagedItem`
    ///   when one is damaged (nothing is changed then); `RSAError.invalidTag`,
    ///   `RSAError.invalidLabel`, `RSAError.insecureStorePermissions`, `RSAError.storeIOError`.
    @discardableResult
    public func updateLabel(_ label: String?, tag: String, keyClass: RSAKeyClass? = nil) throws -> [RSAKeyItemAttributes] {
        try RSAKeyStore.validateTag(tag)
        try RSAKeyStore.validateLabel(label)
        let tagHash = StoreLayout.tagHash(tag)
        return try withWriteTransaction { tx in
            var updated: [RSAKeyItemAttributes] = []
            for candidate in keyClass.map({ [$0] }) ?? RSAKeyClass.allCases {
                guard let loaded = try loadItem(candidate, tagHash: tagHash, knownTag: tag) else { continue }
                var metadata = loaded.metadata
                metadata.label = label
                var contents = try StoreItemRecord.encode(metadata, pem: loaded.pem)
                defer { wipe(&contents) }
                try tx.stageFile(StoreLayout.itemPath(candidate, tagHash: tagHash), contents: contents)
                let a = loaded.attributes
                updated.append(RSAKeyItemAttributes(
                    keyClass: a.keyClass, applicationTag: a.applicationTag, label: label,
                    keySizeInBits: a.keySizeInBits, fingerprint: a.fingerprint,
                    creationDate: a.creationDate, itemID: a.itemID))
            }
            guard !updated.isEmpty else { throw RSAError.keyNotFound(tag: tag) }
            return updated
        }
    }

    /// Delete the items under `tag`: the one of `keyClass`, or both when nil (as
    /// `SecItemDelete` with or without `kSecAttrKeyClass`). Damaged items are deleted too.
    ///
    /// - Throws: `RSAError.keyNotFound(tag:)` when no item matches (nothing is deleted);
    ///   `RSAError.invalidTag`; `RSAError.storeIOError`.
    public func delete(tag: String, keyClass: RSAKeyClass? = nil) throws {
        try RSAKeyStore.validateTag(tag)
        let tagHash = StoreLayout.tagHash(tag)
        try withWriteTransaction { tx in
            for candidate in keyClass.map({ [$0] }) ?? RSAKeyClass.allCases {
                let itemPath = StoreLayout.itemPath(candidate, tagHash: tagHash)
                guard try StoreFileSystem.status(layout.absolute(itemPath)) != nil else { continue }
                tx.remove(itemPath)
                if let old = try? readMetadata(itemPath) {
                    tx.remove(StoreLayout.fingerprintEntry(
                        fingerprintHex: old.fingerprint, tagHash: tagHash, keyClass: candidate))
                }
            }
            guard !tx.isEmpty else { throw RSAError.keyNotFound(tag: tag) }
        }
    }

    /// Rebuild the fingerprint index from the item files: add missing entries, remove entries
    /// that name no item or the wrong fingerprint. Needed only if index/ was damaged or
    /// removed by hand; every write keeps it current.
    ///
    /// - Returns: how many entries were added and removed.
    /// - Throws: `RSAError.storeIOError`.
    @discardableResult
    public func rebuildIndex() throws -> (added: Int, removed: Int) {
        try withWriteTransaction { tx in
            var wanted = Set<String>()
            for keyClass in RSAKeyClass.allCases {
                let classFolder = StoreLayout.classDirectory(keyClass)
                for shard in try StoreFileSystem.listDirectory(layout.absolute(classFolder)) where StoreLayout.isShardName(shard) {
                    for name in try StoreFileSystem.listDirectory(layout.absolute(classFolder + "/" + shard)) {
                        guard let tagHash = StoreLayout.tagHash(fromItemName: name),
                              let loaded = try? loadItem(keyClass, tagHash: tagHash, knownTag: nil) else { continue }
                        wanted.insert(StoreLayout.fingerprintEntry(
                            fingerprintHex: loaded.metadata.fingerprint, tagHash: tagHash, keyClass: keyClass))
                    }
                }
            }
            var present = Set<String>()
            let indexFolder = StoreLayout.fingerprintIndexDirectory
            for shard in try StoreFileSystem.listDirectory(layout.absolute(indexFolder)) where StoreLayout.isShardName(shard) {
                for name in try StoreFileSystem.listDirectory(layout.absolute(indexFolder + "/" + shard)) {
                    present.insert(indexFolder + "/" + shard + "/" + name)
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

    // MARK: Reading items

    /// An item read from disk and checked.
    internal struct LoadedItem {
        var attributes: RSAKeyItemAttributes
        var metadata: StoreItemMetadata
        var pem: String
        var publicKey: RSAPublicKey
        var privateKey: RSAPrivateKey?
    }

    /// Read and check the item under `tag` of `keyClass` under the shared lock.
    private func loadByTag(_ tag: String, _ keyClass: RSAKeyClass) throws -> LoadedItem {
        try RSAKeyStore.validateTag(tag)
        let tagHash = StoreLayout.tagHash(tag)
        let loaded = try withReadLock { try loadItem(keyClass, tagHash: tagHash, knownTag: tag) }
        guard let loaded else { throw RSAError.keyNotFound(tag: tag) }
        return loaded
    }

    /// The metadata record of an item file, without checking the key (for replacing and
    /// deleting, where the item may be damaged).
    private func readMetadata(_ itemPath: String) throws -> StoreItemMetadata {
        guard let file = try StoreFileSystem.readFile(
            layout.absolute(itemPath), maximumByteCount: StoreItemRecord.maximumFileByteCount) else {
            throw StoreDamage("missing")
        }
        return try StoreItemRecord.decode(file.bytes).metadata
    }

    /// Read the item file of (`keyClass`, `tagHash`) and check it completely: format,
    /// metadata, the tag against the file name, the key against the metadata (fingerprint,
    /// size), and for private items the file's permissions.
    ///
    /// - Returns: nil when the file does not exist.
    /// - Throws: `RSAError.damagedItem`, `RSAError.insecureStorePermissions`,
    ///   `RSAError.storeIOError`.
    private func loadItem(_ keyClass: RSAKeyClass, tagHash: String, knownTag: String?) throws -> LoadedItem? {
        let path = layout.absolute(StoreLayout.itemPath(keyClass, tagHash: tagHash))
        var metadataTag: String?
        func damaged(_ reason: String) -> RSAError {
            .damagedItem(tag: knownTag ?? metadataTag, path: path, reason: reason)
        }
        let file: StoreFileSystem.FileContents
        do {
            guard let read = try StoreFileSystem.readFile(path, maximumByteCount: StoreItemRecord.maximumFileByteCount) else {
                return nil
            }
            file = read
        } catch let RSAError.storeIOError(_, reason) {
            throw damaged(reason)
        }
        var bytes = file.bytes
        defer { wipe(&bytes) }
        if keyClass == .private && !allowsInsecurePermissions {
            let mode = StoreFileSystem.permissions(file.status)
            if mode & UInt32(StoreFileSystem.groupOtherBits) != 0 {
                throw RSAError.insecureStorePermissions(path: path, mode: mode)
            }
        }
        let metadata: StoreItemMetadata
        let pem: String
        do {
            (metadata, pem) = try StoreItemRecord.decode(bytes)
        } catch let damage as StoreDamage {
            throw damaged(damage.reason)
        }
        metadataTag = metadata.applicationTag
        guard metadata.keyClass == keyClass else {
            throw damaged("the metadata says key class \(metadata.keyClass) in the \(keyClass) folder")
        }
        guard StoreLayout.tagHash(metadata.applicationTag) == tagHash else {
            throw damaged("the tag in the metadata does not match the file name")
        }
        if let knownTag, !knownTag.utf8.elementsEqual(metadata.applicationTag.utf8) {
            throw damaged("the tag in the metadata differs from the tag asked for")
        }
        guard let ids = StoreLayout.parseItemID(metadata.itemID), ids.tagHash == tagHash, ids.keyClass == keyClass else {
            throw damaged("the item id does not belong to this item")
        }
        guard let milliseconds = StoreItemRecord.parseDate(metadata.creationDate) else {
            throw damaged("the creation date is not valid")
        }
        if let label = metadata.label, label.utf8.count > RSAKeyStore.maximumLabelByteCount {
            throw damaged("the label is too long")
        }
        // Exactly one PEM block of the class's format, ending the file: SPKI for public items,
        // PKCS#8 for private ones. (The key parser alone is as lenient as OpenSSL.)
        let label = keyClass == .public ? "PUBLIC KEY" : "PRIVATE KEY"
        guard pem.hasPrefix("-----BEGIN \(label)-----\n") else {
            throw damaged("the PEM block is not \"\(label)\"")
        }
        guard pem.hasSuffix("-----END \(label)-----\n"),
              pem.ranges(of: "-----BEGIN ").count == 1 else {
            throw damaged("the PEM block is truncated or followed by other data")
        }
        let publicKey: RSAPublicKey
        var privateKey: RSAPrivateKey?
        do {
            switch keyClass {
            case .public:
                publicKey = try RSAPublicKey(pemRepresentation: pem)
            case .private:
                let key = try RSAPrivateKey(pemRepresentation: pem)
                privateKey = key
                publicKey = key.publicKey
            }
        } catch let error as RSAError {
            throw damaged("the key does not parse (\(error.description))")
        }
        let fingerprint = publicKey.fingerprint
        guard StoreHex.encode(fingerprint.bytes) == metadata.fingerprint else {
            throw damaged("the fingerprint in the metadata does not match the key")
        }
        guard metadata.keySizeInBits == publicKey.modulusBitCount else {
            throw damaged("the key size in the metadata (\(metadata.keySizeInBits) bits) does not match the key (\(publicKey.modulusBitCount) bits)")
        }
        let attributes = RSAKeyItemAttributes(
            keyClass: keyClass, applicationTag: metadata.applicationTag, label: metadata.label,
            keySizeInBits: metadata.keySizeInBits, fingerprint: fingerprint,
            creationDate: StoreItemRecord.date(milliseconds: milliseconds), itemID: metadata.itemID)
        return LoadedItem(attributes: attributes, metadata: metadata, pem: pem, publicKey: publicKey, privateKey: privateKey)
    }

    // MARK: Locking

    /// Run `body` under the shared lock, first applying a journal left by a crashed writer
    /// (which needs the exclusive lock for a moment).
    private func withReadLock<T>(_ body: () throws -> T) throws -> T {
        var lock = try StoreLock(path: layout.lockPath, exclusive: false)
        if access(layout.journalPath, F_OK) == 0 {
            // Writers hold the exclusive lock from start to end, so a journal seen under the
            // shared lock was left by a writer that died.
            lock.release()
            let exclusive = try StoreLock(path: layout.lockPath, exclusive: true)
            try StoreTransaction.recover(layout: layout)
            exclusive.release()
            lock = try StoreLock(path: layout.lockPath, exclusive: false)
        }
        defer { lock.release() }
        return try body()
    }

    /// Run `body` under the exclusive lock, after applying any left-over journal and removing
    /// stale temporary files of the store folder, then commit what it planned (or remove its
    /// temporary files when it throws).
    private func withWriteTransaction<T>(
        crashPoint: StoreCrashPoint? = nil, _ body: (inout StoreTransaction) throws -> T
    ) throws -> T {
        let lock = try StoreLock(path: layout.lockPath, exclusive: true)
        defer { lock.release() }
        try StoreTransaction.recover(layout: layout)
        for name in try StoreFileSystem.listDirectory(layout.root) where name.hasPrefix(StoreFileSystem.temporaryPrefix) {
            try StoreFileSystem.removeFile(layout.absolute(name))
        }
        var tx = StoreTransaction(layout: layout)
        do {
            let result = try body(&tx)
            try tx.commit(crashPoint: crashPoint)
            return result
        } catch {
            tx.abandon()
            throw error
        }
    }

    // MARK: Validation and helpers

    /// - Throws: `RSAError.invalidTag` for an empty tag or one over 255 bytes of UTF-8.
    internal static func validateTag(_ tag: String) throws {
        let byteCount = tag.utf8.count
        guard byteCount > 0 else { throw RSAError.invalidTag(reason: "the application tag is empty") }
        guard byteCount <= maximumTagByteCount else {
            throw RSAError.invalidTag(
                reason: "the application tag is \(byteCount) bytes of UTF-8; at most \(maximumTagByteCount) are allowed")
        }
    }

    /// - Throws: `RSAError.invalidLabel` for a label over ``maximumLabelByteCount`` bytes.
    internal static func validateLabel(_ label: String?) throws {
        guard let label else { return }
        let byteCount = label.utf8.count
        guard byteCount <= maximumLabelByteCount else {
            throw RSAError.invalidLabel(
                reason: "the label is \(byteCount) bytes of UTF-8; at most \(maximumLabelByteCount) are allowed")
        }
    }

    /// Items sorted by tag (UTF-8 bytes), public before private.
    private static func sorted(_ items: [RSAKeyItemAttributes]) -> [RSAKeyItemAttributes] {
        items.sorted { a, b in
            if !a.applicationTag.utf8.elementsEqual(b.applicationTag.utf8) {
                return a.applicationTag.utf8.lexicographicallyPrecedes(b.applicationTag.utf8)
            }
            return a.keyClass == .public && b.keyClass == .private
        }
    }

    /// `path` made absolute against the current folder.
    private static func absolutePath(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }

    /// `path` without trailing "/" (except the root "/") and without "//" or "/./".
    private static func normalised(_ path: String) -> String {
        let parts = path.split(separator: "/").filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }
}

extension RSAKeyStoreProblem {
    /// A problem for the item file at `path` from the error reading it gave.
    init(path: String, error: RSAError) {
        self.path = path
        self.error = error
        switch error {
        case let .damagedItem(tag, _, reason):
            self.applicationTag = tag
            self.reason = reason
        case let .insecureStorePermissions(_, mode):
            self.applicationTag = nil
            self.reason = "readable by group or others (mode 0\(String(mode, radix: 8)))"
        default:
            self.applicationTag = nil
            self.reason = error.description
        }
    }
}

extension StoreFileSystem {
    /// The last component of a "/"-separated path.
    static func baseName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}

extension String {
    fileprivate var trimmingNewlines: String {
        var s = self
        while s.hasSuffix("\n") { s.removeLast() }
        return s
    }
}
