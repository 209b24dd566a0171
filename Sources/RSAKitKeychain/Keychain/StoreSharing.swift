// Stores shared through a Unix group: the Linux boundary for items that several services
// (several Unix users) use. The kernel enforces it: the store folder is 2770 and owned by
// the group, so users outside the group cannot enter it at all; members read and write
// every item (files 0660, owned by the group whoever wrote them).
//
// A shared store is marked by its "sharing" file ("rsakit shared store" and the group's
// gid), so that a private store whose folder was loosened by mistake is still refused as
// loose rather than taken for a shared one. Owner and mode rules (docs/access-groups.md):
//   - every folder: group = the store's group, no bit for others; made 2770 (setgid, so that
//     files made by other tools inherit the group too);
//   - every file: group = the store's group, no bit for others; made 0660; any user may own
//     it (a member wrote it, or root);
//   - anything else (a bit for others, another group) is refused as loose, as ssh refuses a
//     loose key file, unless the store is opened with allowInsecurePermissions.

import RSAKitCore
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The modes a store creates and accepts: private (0700 folders, 0600 files, no group or
/// other bit accepted) or shared with one Unix group (2770, 0660, owned by that group, no
/// other bit accepted).
internal struct StorePermissions: Sendable, Equatable {
    /// The gid of the group the store is shared with, nil for a private store.
    let sharedGroup: gid_t?

    static let `private` = StorePermissions(sharedGroup: nil)

    /// Mode of the folders this store makes.
    var directoryMode: mode_t { sharedGroup == nil ? StoreFileSystem.directoryMode : 0o2770 }
    /// Mode of the files this store makes.
    var fileMode: mode_t { sharedGroup == nil ? StoreFileSystem.fileMode : 0o660 }
    /// The bits no folder or private file may have.
    var forbiddenBits: UInt32 { sharedGroup == nil ? UInt32(StoreFileSystem.groupOtherBits) : 0o007 }

    /// The finding for `path` whose lstat result is `st`, or nil when its mode and group are
    /// acceptable: ``RSAError/insecureStorePermissions(path:mode:)`` for a private store,
    /// ``RSAError/insecureSharedStore(path:reason:)`` for a shared one.
    func finding(_ path: String, _ st: stat) -> RSAError? {
        let mode = StoreFileSystem.permissions(st)
        guard let group = sharedGroup else {
            return mode & forbiddenBits != 0 ? .insecureStorePermissions(path: path, mode: mode) : nil
        }
        if mode & forbiddenBits != 0 {
            return .insecureSharedStore(
                path: path,
                reason: "mode 0\(String(mode, radix: 8)) lets users outside group \(StoreSharing.groupName(group)) in "
                    + "(run 'chmod o-rwx \(path)')")
        }
        if st.st_gid != group {
            return .insecureSharedStore(
                path: path,
                reason: "it belongs to group \(StoreSharing.groupName(st.st_gid)), not to the store's group "
                    + "\(StoreSharing.groupName(group)) (run 'chgrp \(StoreSharing.groupName(group)) \(path)')")
        }
        return nil
    }
}

/// The "sharing" file and the checks made before a shared store is opened.
internal enum StoreSharing {
    static let fileName = "sharing"
    static let header = "rsakit shared store\n"

    /// The text of the sharing file for `group`.
    static func text(group: gid_t) -> String { header + "gid \(group)\n" }

    // The user and group database through the reentrant calls (getpwuid_r and the like): the
    // system agent answers callers on several threads at once, and the plain calls share one
    // static buffer, so one thread could read a name another thread's lookup wrote.

    /// Run a reentrant lookup (`getpwuid_r` and the like) with a scratch buffer, grown on
    /// ERANGE, and read what it found while the buffer lives; nil when nothing was found.
    private static func lookup<Entry, Value>(
        _ call: (
            UnsafeMutablePointer<Entry>, UnsafeMutablePointer<CChar>, Int,
            UnsafeMutablePointer<UnsafeMutablePointer<Entry>?>
        ) -> Int32,
        _ read: (Entry) -> Value?
    ) -> Value? {
        let entry = UnsafeMutablePointer<Entry>.allocate(capacity: 1)
        defer { entry.deallocate() }
        var size = 1024
        while size <= 1 << 20 {
            var buffer = [CChar](repeating: 0, count: size)
            var result: UnsafeMutablePointer<Entry>?
            let value: Value?? = buffer.withUnsafeMutableBufferPointer { scratch in
                let code = call(entry, scratch.baseAddress!, scratch.count, &result)
                if code == ERANGE { return nil }
                guard code == 0, let found = result else { return .some(nil) }
                return .some(read(found.pointee))
            }
            if let value { return value }
            size *= 4
        }
        return nil
    }

    /// The name of group `gid`, or its number when it has no name.
    static func groupName(_ gid: gid_t) -> String {
        lookup({ getgrgid_r(gid, $0, $1, $2, $3) }, { $0.gr_name.map { String(cString: $0) } }) ?? String(gid)
    }

    /// The name of user `uid`, or its number.
    static func userName(_ uid: uid_t) -> String {
        lookup({ getpwuid_r(uid, $0, $1, $2, $3) }, { $0.pw_name.map { String(cString: $0) } }) ?? String(uid)
    }

    /// The gid of the group named `name`, or nil.
    static func groupID(named name: String) -> gid_t? {
        lookup({ getgrnam_r(name, $0, $1, $2, $3) }, { $0.gr_gid })
    }

    /// The uid and primary gid of the user named `name`, or nil.
    static func userIDs(named name: String) -> (uid: uid_t, gid: gid_t)? {
        lookup({ getpwnam_r(name, $0, $1, $2, $3) }, { ($0.pw_uid, $0.pw_gid) })
    }

    /// The permissions of the store folder `root`: shared when it holds a sharing file.
    ///
    /// - Throws: `RSAError.storeAccessDenied` when the folder exists and this user may not
    ///   enter it (naming the folder's owner and group, and the user);
    ///   `RSAError.insecureSharedStore` when the folder's group is not the one the sharing file
    ///   names; `RSAError.storeIOError` for a sharing file that cannot be read.
    static func permissions(root: String) throws -> StorePermissions {
        guard let st = try StoreFileSystem.status(root), StoreFileSystem.isDirectory(st) else { return .private }
        if access(root, X_OK) != 0 && errno == EACCES {
            throw RSAError.storeAccessDenied(path: root, reason: denialReason(st))
        }
        let path = root + "/" + fileName
        let file: StoreFileSystem.FileContents?
        do {
            file = try StoreFileSystem.readFile(path, maximumByteCount: 256)
        } catch let RSAError.storeIOError(_, reason) where reason.hasSuffix(StoreFileSystem.errnoText(EACCES)) {
            throw RSAError.storeAccessDenied(path: root, reason: denialReason(st))
        }
        guard let file else { return .private }
        let text = String(decoding: file.bytes, as: UTF8.self)
        guard text.hasPrefix(header), text.hasSuffix("\n"),
            let gid = gid_t(text.dropFirst(header.count).dropLast().replacingPrefix("gid "))
        else {
            throw RSAError.storeIOError(path: path, reason: "not a sharing file of this rsakit version")
        }
        guard st.st_gid == gid else {
            throw RSAError.insecureSharedStore(
                path: root,
                reason: "the store is shared with group \(groupName(gid)), but the folder belongs to group "
                    + "\(groupName(st.st_gid))")
        }
        return StorePermissions(sharedGroup: gid)
    }

    /// Why a user may not enter the folder of `st`: its owner, group and mode, and the user.
    static func denialReason(_ st: stat) -> String {
        let me = geteuid()
        let shared = st.st_mode & 0o070 != 0
        return "the folder belongs to user \(userName(st.st_uid)) and group \(groupName(st.st_gid)) "
            + "(mode 0\(String(StoreFileSystem.permissions(st), radix: 8))); user \(userName(me)) "
            + (shared ? "is not a member of group \(groupName(st.st_gid))" : "may not enter it")
    }
}

extension Substring {
    /// The text after `prefix`, or an empty string when it does not start with it (so that
    /// a malformed line parses as nothing).
    fileprivate func replacingPrefix(_ prefix: String) -> Substring {
        hasPrefix(prefix) ? dropFirst(prefix.count) : ""
    }
}

extension RSAKeyStore {
    /// The Unix group this store is shared with (``createShared(path:unixGroup:accessGroups:)``), or nil for
    /// a store of one user.
    public var sharedUnixGroup: String? {
        layout.permissions.sharedGroup.map(StoreSharing.groupName)
    }

    /// Create a store that the members of Unix group `unixGroup` share: the folder (and its
    /// missing parents, 0755 as `mkdir -p` makes them) is made, given to the group and set
    /// 2770 (setgid: what is made inside it keeps the group), every folder and file the store
    /// makes is 2770 or 0660 and owned by the group whatever the umask, and the lock file is
    /// group-writable, so writers of different users exclude each other. The kernel then keeps
    /// users outside the group out (``RSAError/storeAccessDenied(path:reason:)``).
    ///
    /// Creating one again, with the same group, opens it. The caller must be root or a member
    /// of the group.
    ///
    /// - Parameters:
    ///   - path: the store folder: missing, or an empty folder of this user.
    ///   - unixGroup: the name of an existing Unix group.
    ///   - accessGroups: the access groups to open the store with, as
    ///     ``init(path:accessGroups:createIfMissing:allowInsecurePermissions:)``; nil sees every group.
    /// - Returns: the store, open.
    /// - Throws: `RSAError.invalidAttribute` when no Unix group has that name;
    ///   `RSAError.storeIOError` when the folder holds files already or is a store not shared
    ///   with that group, or when the group cannot be given (the caller is not a member);
    ///   every error of opening a store.
    public static func createShared(path: String, unixGroup: String, accessGroups: [String]? = nil) throws
        -> RSAKeyStore
    {
        guard let gid = StoreSharing.groupID(named: unixGroup) else {
            throw RSAError.invalidAttribute(reason: "no Unix group is named \"\(unixGroup)\"")
        }
        if let accessGroups { try validateAccessGroups(accessGroups) }
        let root = normalised(absolutePath(path))
        let permissions = StorePermissions(sharedGroup: gid)
        if let st = try StoreFileSystem.status(root) {
            guard StoreFileSystem.isDirectory(st) else {
                throw RSAError.storeIOError(path: root, reason: "exists and is not a folder")
            }
            let existing = try StoreSharing.permissions(root: root)
            if existing.sharedGroup == nil {
                guard try StoreFileSystem.listDirectory(root).isEmpty else {
                    throw RSAError.storeIOError(
                        path: root, reason: "the folder is not empty: a shared store is made in a new or empty folder")
                }
            } else if existing.sharedGroup != gid {
                throw RSAError.storeIOError(
                    path: root, reason: "already shared with group \(StoreSharing.groupName(existing.sharedGroup!))")
            }
        } else {
            // Missing parents as `mkdir -p` makes them (the umask decides): a 0700 parent would
            // keep the other members out.
            var parent = ""
            for part in StoreFileSystem.parent(of: root).split(separator: "/") {
                parent += "/" + part
                guard mkdir(parent, 0o755) == 0 || errno == EEXIST else {
                    throw StoreFileSystem.ioError("mkdir", parent)
                }
            }
            guard mkdir(root, 0o700) == 0 || errno == EEXIST else { throw StoreFileSystem.ioError("mkdir", root) }
        }
        guard chown(root, uid_t.max, gid) == 0 else {
            let code = errno
            throw RSAError.storeIOError(
                path: root,
                reason: "chown to group \(unixGroup): \(StoreFileSystem.errnoText(code))"
                    + (code == EPERM ? " (only root and members of the group may make a store shared with it)" : ""))
        }
        guard chmod(root, permissions.directoryMode) == 0 else { throw StoreFileSystem.ioError("chmod", root) }
        let marker = root + "/" + StoreSharing.fileName
        if try StoreFileSystem.status(marker) == nil {
            let temporary = root + "/" + StoreFileSystem.temporaryName(for: StoreSharing.fileName)
            try StoreFileSystem.createFile(temporary, contents: Array(StoreSharing.text(group: gid).utf8), permissions)
            try StoreFileSystem.renameFile(temporary, marker)
            try StoreFileSystem.syncDirectory(root)
        }
        if let accessGroups {
            return try RSAKeyStore(path: root, accessGroups: accessGroups)
        }
        return try RSAKeyStore(path: root)
    }
}
