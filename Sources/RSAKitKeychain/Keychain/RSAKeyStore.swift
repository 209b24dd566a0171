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

/// A directory of permanent RSA keys found by application tag: the rsakit analogue of the
/// keychain items that `SecKeyGeneratePair` makes with `kSecAttrIsPermanent` and
/// `kSecAttrApplicationTag`, and that `SecItemCopyMatching` finds by key class, tag and key
/// type.
///
/// Each item is one key (public or private) with its attributes
/// (``RSAKeyItemAttributes``). An item is one file named after the SHA-256 of its tag, so a
/// lookup by tag opens one file whatever the size of the store. Private items are PKCS#8
/// PEM, public items SPKI PEM, each after a one-line metadata record: `openssl pkey -in`
/// reads an item file directly. The layout is described in docs/keychain.md.
///
/// Every item class (keys, certificates, identities, generic and internet passwords, CRLs)
/// follows Apple's query model (`SecItemAdd`, `SecItemCopyMatching`, `SecItemUpdate`,
/// `SecItemDelete`) under the same names:
///
/// | class | add | one item | every match | update | delete |
/// | --- | --- | --- | --- | --- | --- |
/// | key | `addKeyPair`, `addPublicKey` | `keyItem(tag:keyClass:)`, `keyItem(id:)` | `keyItems(fingerprint:)`, `allKeyItems()` | `updateKey(tag:keyClass:label:)` | `deleteKey(tag:keyClass:)` |
/// | certificate | `addCertificate` | `certificate(id:)`, `certificate(fingerprint:)` | `certificates(label:)`, `certificates(publicKeyFingerprint:)` | `updateCertificate(id:label:trust:)` | `deleteCertificate(id:)` |
/// | identity | `addIdentity` | `identity(for:)` | `identities(label:)`, `identities(tag:)`, `allIdentities()` | through its key and certificate | through its key and certificate |
/// | generic password | `addGenericPassword` | `genericPassword(service:account:)` | `genericPasswords(service:)` | `updateGenericPassword` | `deleteGenericPassword` |
/// | internet password | `addInternetPassword` | `internetPassword(_:)` | `internetPasswords(matching:)` | `updateInternetPassword` | `deleteInternetPassword` |
/// | CRL | `addCRL` | `crl(issuer:)` | `allCRLs()` | (a newer CRL supersedes) | `deleteCRL(issuer:)` |
/// | any | | `item(id:)` (persistent reference) | `allItems()` | | `deleteItem(id:)` |
///
/// The item id (``RSAKeyItemAttributes/itemID`` and its peers) is the persistent reference.
/// Calls that return the key or the secret rather than the attributes (`kSecReturnRef`,
/// `kSecReturnData`) are `privateKey(tag:)`, `publicKey(tag:)`, `certificateValue(id:)`,
/// `genericPasswordValue(service:account:)`, `internetPasswordValue(_:)` and `allCRLValues()`.
///
/// Lookups and errors, the same in every class:
/// - a call that returns one item throws ``RSAError/itemNotFound(_:)`` naming the class and
///   attributes it looked for when none matches; a call that returns a list returns `[]`;
/// - an add whose unique attributes are taken throws ``RSAError/duplicateItem(_:)`` and
///   changes nothing; an update of a missing item throws ``RSAError/itemNotFound(_:)`` and
///   creates nothing;
/// - damaged items: a lookup, of one item or of every item matching a query, that meets a
///   damaged item file throws ``RSAError/damagedItem(tag:path:reason:)`` (it never passes over
///   it, as it cannot tell whether the item matches); a listing (``allItems()``,
///   ``allKeyItems()``, ``snapshot()``) reads every file, never throws for a damaged one and
///   never leaves one out: each is in its `problems` (``RSAKeyStoreProblem``: the path, the
///   reason, the error a lookup throws), beside the items that read. Deleting by tag, or by
///   service and account, removes a damaged item too.
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
    /// The access groups this store object was opened with (the first is where new items
    /// go), or nil when it was opened without groups and sees every group; see
    /// ``init(path:accessGroups:createIfMissing:allowInsecurePermissions:)``.
    public let accessGroups: [String]?

    internal let layout: StoreLayout
    /// The store key while the store is unlocked (protected stores only).
    internal let unlocked = PThreadMutex<UnlockedStoreKey?>(nil)

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
    /// ``init(url:createIfMissing:allowInsecurePermissions:)``).
    ///
    /// Opening checks that the store folders and every private item file give no access to
    /// group or others, applies the journal of a write interrupted after its commit point, and
    /// removes temporary files left by interrupted writes in the store folder and the private
    /// folders (those in public folders go at the next write into their folder or the next
    /// ``allKeyItems()``; they are ignored meanwhile). Its cost grows with the number of private
    /// items (one lstat each); public items are not listed.
    ///
    /// Several processes or threads may open, and so create, the same new store at once:
    /// one of them writes its VERSION file under the store's lock and the others open it.
    ///
    /// - Parameters:
    ///   - path: the store folder, or nil for the default location.
    ///   - createIfMissing: true (the default) creates a missing store; false opens only an
    ///     existing one (its VERSION file present) and creates nothing, not even a folder:
    ///     what a read-only caller wants, so that a mistyped path is reported, not made.
    ///   - allowInsecurePermissions: go on (recording ``permissionWarnings``) when folders
    ///     or private item files are accessible by group or others.
    /// - Throws: `RSAError.storeNotFound(path:)` when `createIfMissing` is false and no store
    ///   exists at the path; `RSAError.insecureStorePermissions(path:mode:)` for the first
    ///   folder or private item file with group or other bits (unless allowed);
    ///   `RSAError.storeIOError` when the folder cannot be created or read, exists and is not
    ///   an rsakit store, or its format is unknown.
    public convenience init(path: String? = nil, createIfMissing: Bool = true, allowInsecurePermissions: Bool = false)
        throws
    {
        try self.init(
            opening: path, createIfMissing: createIfMissing, allowInsecurePermissions: allowInsecurePermissions,
            accessGroups: nil)
    }

    /// Open the store at `path` as ``init(path:createIfMissing:allowInsecurePermissions:)``
    /// does, seeing only the items of `accessGroups` (as a program entitled to those
    /// `keychain-access-groups`): lookups and listings pass over items of other groups, new
    /// items go into the first group, and a change or deletion of an item of another group
    /// throws. Filtering inside one process is not a security boundary: another program of
    /// the same user reads the store's files directly.
    ///
    /// - Parameters:
    ///   - accessGroups: one or more distinct group names
    ///     (``validateAccessGroup(_:)``); the first is ``accessGroupForNewItems``.
    ///   - path, createIfMissing, allowInsecurePermissions: as in
    ///     ``init(path:createIfMissing:allowInsecurePermissions:)``.
    /// - Throws: `RSAError.invalidAttribute` for an empty list, a name given twice or a name
    ///   that is not a group name (nothing is opened or created); every error of
    ///   ``init(path:createIfMissing:allowInsecurePermissions:)``.
    public convenience init(
        path: String? = nil, accessGroups: [String], createIfMissing: Bool = true,
        allowInsecurePermissions: Bool = false
    ) throws {
        try RSAKeyStore.validateAccessGroups(accessGroups)
        try self.init(
            opening: path, createIfMissing: createIfMissing, allowInsecurePermissions: allowInsecurePermissions,
            accessGroups: accessGroups)
    }

    private init(opening path: String?, createIfMissing: Bool, allowInsecurePermissions: Bool, accessGroups: [String]?)
        throws
    {
        self.accessGroups = accessGroups
        let chosen = try path ?? RSAKeyStore.defaultLocation()
        guard !chosen.isEmpty else {
            throw RSAError.storeIOError(path: chosen, reason: "the store path is empty")
        }
        let root = RSAKeyStore.normalised(RSAKeyStore.absolutePath(chosen))
        let layout = StoreLayout(root: root, permissions: try StoreSharing.permissions(root: root))
        self.path = root
        self.layout = layout
        self.allowsInsecurePermissions = allowInsecurePermissions
        if !createIfMissing, try StoreFileSystem.status(layout.versionPath) == nil {
            throw RSAError.storeNotFound(path: root)
        }
        if layout.permissions.sharedGroup == nil {
            try RSAKeyStore.tightenIfEmptyFolder(root)  // a FileManager-made folder (RSAKeyStore+App.swift)
        }
        try RSAKeyStore.prepare(layout)
        self.permissionWarnings = try RSAKeyStore.checkAndClean(
            layout, allowInsecurePermissions: allowInsecurePermissions)
    }

    /// Create the folders, lock file and VERSION file that are missing; refuse a non-empty
    /// folder that is not a store and a store of another format.
    ///
    /// Several processes may create one new store at once: the folder check tolerates a
    /// VERSION file that appears while it lists the folder (another opener finishing), and the
    /// VERSION file is read again under the exclusive lock before one is written.
    static func prepare(_ layout: StoreLayout) throws {
        try makeDirectories(layout.root)
        if try checkVersion(layout) {
            try createLockFile(layout)
            return
        }
        let foreign = try StoreFileSystem.listDirectory(layout.root).filter {
            !StoreLayout.topLevelNames.contains($0) && !$0.hasPrefix(StoreFileSystem.temporaryPrefix)
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
        if try checkVersion(layout) { return }  // made by another opener while this one waited
        for folder in StoreLayout.initialDirectories {
            try StoreFileSystem.makeDirectory(layout.absolute(folder), layout.permissions)
        }
        let temporary = layout.absolute(StoreFileSystem.temporaryName(for: StoreLayout.versionName))
        try StoreFileSystem.createFile(temporary, contents: Array(StoreLayout.versionText.utf8), layout.permissions)
        try StoreFileSystem.renameFile(temporary, layout.versionPath)
        try StoreFileSystem.syncDirectory(layout.root)
    }

    /// Whether the VERSION file exists; when it does, its text must be a format this version
    /// reads.
    ///
    /// - Throws: `RSAError.storeIOError` for an unsupported format or a failed read.
    private static func checkVersion(_ layout: StoreLayout) throws -> Bool {
        guard let version = try StoreFileSystem.readFile(layout.versionPath, maximumByteCount: 256) else {
            return false
        }
        guard
            version.bytes.elementsEqual(StoreLayout.versionText.utf8)
                || version.bytes.elementsEqual(StoreLayout.versionTextV1.utf8)
        else {
            throw RSAError.storeIOError(
                path: layout.versionPath,
                reason:
                    "unsupported store format \"\(String(decoding: version.bytes, as: UTF8.self).trimmingNewlines)\"")
        }
        return true
    }

    /// mkdir -p with mode 0700 for each folder created.
    static func makeDirectories(_ path: String) throws {
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

    /// Create the lock file (0600; 0660 and the group's in a shared store, so that every
    /// member can open it for flock) if it does not exist.
    static func createLockFile(_ layout: StoreLayout) throws {
        if try StoreFileSystem.status(layout.lockPath) != nil { return }
        let fd = Glibc.open(layout.lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, StoreFileSystem.fileMode)
        guard fd >= 0 else { throw StoreFileSystem.ioError("open", layout.lockPath) }
        if let group = layout.permissions.sharedGroup { fchown(fd, uid_t.max, group) }
        fchmod(fd, layout.permissions.fileMode)
        close(fd)
        try StoreFileSystem.syncDirectory(layout.root)
    }

    /// The check made on opening: permissions of folders and private item files (the
    /// private files are stat'ed, public ones only listed), stale temporary files, journal.
    static func checkAndClean(_ layout: StoreLayout, allowInsecurePermissions: Bool) throws -> [RSAError] {
        var warnings: [RSAError] = []
        func check(_ path: String, _ st: stat) throws {
            if let finding = layout.permissions.finding(path, st) {
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
                // into the folder or the next allKeyItems().
                guard keyClass == .private else { continue }
                let temporaryPrefix = Array(StoreFileSystem.temporaryPrefix.utf8CString.dropLast())
                try StoreFileSystem.forEachEntryStatus(shardFolder) { name, st in
                    // Names are C strings here; a Swift String is made only for the rare report.
                    if strncmp(name, temporaryPrefix, temporaryPrefix.count) == 0 {
                        stale.append(shardFolder + "/" + String(cString: name))
                    } else if StoreFileSystem.permissions(st) & layout.permissions.forbiddenBits != 0
                        || (layout.permissions.sharedGroup.map { st.st_gid != $0 } ?? false)
                    {
                        try check(shardFolder + "/" + String(cString: name), st)
                    }
                }
            }
        }
        // Password items hold secrets: checked (and cleaned) as private items are.
        for folder in StoreLayout.recordDirectories {
            let classFolder = layout.absolute(folder)
            try checkFolder(classFolder)
            for shard in try StoreFileSystem.listDirectory(classFolder).sorted() where StoreLayout.isShardName(shard) {
                let shardFolder = classFolder + "/" + shard
                try checkFolder(shardFolder)
                guard folder == StoreLayout.passwordDirectory else { continue }
                for name in try StoreFileSystem.listDirectory(shardFolder) {
                    let path = shardFolder + "/" + name
                    if name.hasPrefix(StoreFileSystem.temporaryPrefix) {
                        stale.append(path)
                    } else if let st = try StoreFileSystem.status(path) {
                        try check(path, st)
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

    // MARK: Validation and helpers

    /// - Throws: `RSAError.invalidTag` for an empty tag or one over 255 bytes of UTF-8.
    internal static func validateTag(_ tag: String) throws {
        let byteCount = tag.utf8.count
        guard byteCount > 0 else { throw RSAError.invalidTag(reason: "the application tag is empty") }
        guard byteCount <= maximumTagByteCount else {
            throw RSAError.invalidTag(
                reason: "the application tag is \(byteCount) bytes of UTF-8; at most \(maximumTagByteCount) are allowed"
            )
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
    static func sorted(_ items: [RSAKeyItemAttributes]) -> [RSAKeyItemAttributes] {
        items.sorted { a, b in
            if !a.applicationTag.utf8.elementsEqual(b.applicationTag.utf8) {
                return a.applicationTag.utf8.lexicographicallyPrecedes(b.applicationTag.utf8)
            }
            return a.keyClass == .public && b.keyClass == .private
        }
    }

    /// `path` made absolute against the current folder.
    static func absolutePath(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }

    /// `path` without trailing "/" (except the root "/") and without "//" or "/./".
    static func normalised(_ path: String) -> String {
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
