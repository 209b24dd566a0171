// The POSIX file operations the key store is built from: folders created 0700, files
// created 0600 with O_CREAT | O_EXCL (never wider, whatever the umask), fsync of files and
// folders, rename for atomic replacement, and flock(2) locks. A store shared through a Unix
// group (StorePermissions) makes its folders 2770 and its files 0660, owned by that group.
//
// Every failure becomes `RSAError.storeIOError(path:reason:)` naming the call and errno.

import RSAKitCore
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

internal enum StoreFileSystem {
    /// Permission bits of every store folder.
    static let directoryMode: mode_t = 0o700
    /// Permission bits of every store file (private items need it; public ones get it too).
    static let fileMode: mode_t = 0o600
    /// Group and other bits: none may be set on a folder or a private item file.
    static let groupOtherBits: mode_t = 0o077
    /// File names starting with this prefix are temporary files of an unfinished write.
    static let temporaryPrefix = ".tmp-"

    /// The text of `errno` value `code` (strerror), for error reasons.
    static func errnoText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// `RSAError.storeIOError` for a failed `call` on `path` with the current errno.
    static func ioError(_ call: String, _ path: String, errno code: Int32 = errno) -> RSAError {
        .storeIOError(path: path, reason: "\(call): \(errnoText(code))")
    }

    /// The result of lstat(2), or nil when the path does not exist.
    static func status(_ path: String) throws -> stat? {
        var st = stat()
        if lstat(path, &st) == 0 { return st }
        if errno == ENOENT { return nil }
        throw ioError("lstat", path)
    }

    /// Whether `st` describes a folder (not a symbolic link to one).
    static func isDirectory(_ st: stat) -> Bool { (st.st_mode & S_IFMT) == S_IFDIR }

    /// Whether `st` describes a regular file (not a symbolic link to one).
    static func isRegularFile(_ st: stat) -> Bool { (st.st_mode & S_IFMT) == S_IFREG }

    /// Permission bits (0o7777) of `st`.
    static func permissions(_ st: stat) -> UInt32 { UInt32(st.st_mode & 0o7777) }

    /// Create the folder `path` with mode 0700 (2770 and the store's group when `permissions`
    /// is shared) unless it exists; when it is created, fix the group with chown and the mode
    /// with chmod (a umask such as 0277 may have removed owner bits; umask can never add group
    /// or other bits, so the folder is never wider than the mode asked) and fsync the parent.
    ///
    /// - Returns: true when the folder was created.
    /// - Throws: `RSAError.storeIOError` when the path exists and is not a folder (symbolic
    ///   links are refused), or a call fails.
    @discardableResult
    static func makeDirectory(_ path: String, _ permissions: StorePermissions = .private) throws -> Bool {
        if mkdir(path, permissions.directoryMode & 0o777) == 0 {
            // chown before chmod: a change of group may clear the setgid bit.
            if let group = permissions.sharedGroup {
                guard chown(path, uid_t.max, group) == 0 else { throw ioError("chown", path) }
            }
            guard chmod(path, permissions.directoryMode) == 0 else { throw ioError("chmod", path) }
            try syncDirectory(parent(of: path))
            return true
        }
        let code = errno
        guard code == EEXIST else { throw ioError("mkdir", path, errno: code) }
        guard let st = try status(path), isDirectory(st) else {
            throw RSAError.storeIOError(path: path, reason: "exists and is not a folder")
        }
        return false
    }

    /// The folder part of `path` ("/a/b/c" -> "/a/b"; "c" -> ".").
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// fsync(2) a folder, so that renames, creations and removals in it are durable.
    static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw ioError("fsync", path) }
    }

    /// Create `path` as a new file of mode 0600 (0660 and the store's group when `permissions`
    /// is shared) holding `contents`, durably: open with O_CREAT | O_EXCL | O_NOFOLLOW and
    /// mode 0600, fchown to the shared group and fchmod to the mode before any byte is written
    /// (so no umask and no missing setgid bit makes it narrower or wider), write everything,
    /// fsync, close. The parent folder is not synced here.
    ///
    /// - Throws: `RSAError.storeIOError` when the file exists or a call fails; a partly
    ///   written file is removed before throwing.
    static func createFile(_ path: String, contents: [UInt8], _ permissions: StorePermissions = .private) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, fileMode)
        guard fd >= 0 else { throw ioError("open", path) }
        var closed = false
        do {
            if let group = permissions.sharedGroup {
                guard fchown(fd, uid_t.max, group) == 0 else { throw ioError("fchown", path) }
            }
            guard fchmod(fd, permissions.fileMode) == 0 else { throw ioError("fchmod", path) }
            try writeAll(fd, contents, path: path)
            guard fsync(fd) == 0 else { throw ioError("fsync", path) }
            closed = true
            guard close(fd) == 0 else { throw ioError("close", path) }
        } catch {
            if !closed { close(fd) }
            unlink(path)
            throw error
        }
    }

    /// write(2) until every byte is written, retrying on EINTR.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ioError("write", path)
                }
                offset += n
            }
        }
    }

    /// A file's bytes and lstat result.
    struct FileContents {
        var bytes: [UInt8]
        var status: stat
    }

    /// Read a whole regular file, refusing symbolic links (O_NOFOLLOW) and files longer than
    /// `maximumByteCount` bytes.
    ///
    /// - Returns: nil when the file does not exist.
    /// - Throws: `RSAError.storeIOError` when the path is not a regular file, is too long,
    ///   or a call fails.
    static func readFile(_ path: String, maximumByteCount: Int) throws -> FileContents? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw ioError("open", path)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ioError("fstat", path) }
        guard isRegularFile(st) else {
            throw RSAError.storeIOError(path: path, reason: "not a regular file")
        }
        guard Int(st.st_size) <= maximumByteCount else {
            throw RSAError.storeIOError(
                path: path, reason: "file is \(st.st_size) bytes, more than the \(maximumByteCount) allowed")
        }
        var bytes = [UInt8](repeating: 0, count: maximumByteCount + 1)
        var total = 0
        try bytes.withUnsafeMutableBytes { buffer in
            while total < buffer.count {
                let n = read(fd, buffer.baseAddress! + total, buffer.count - total)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ioError("read", path)
                }
                if n == 0 { break }
                total += n
            }
        }
        guard total <= maximumByteCount else {
            throw RSAError.storeIOError(path: path, reason: "file grew beyond \(maximumByteCount) bytes while read")
        }
        bytes.removeSubrange(total...)
        return FileContents(bytes: bytes, status: st)
    }

    /// rename(2) `from` onto `to` (atomic replacement within one file system).
    static func renameFile(_ from: String, _ to: String) throws {
        guard rename(from, to) == 0 else {
            throw ioError("rename to \(to)", from)
        }
    }

    /// unlink(2) `path`. - Returns: false when it did not exist.
    @discardableResult
    static func removeFile(_ path: String) throws -> Bool {
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw ioError("unlink", path)
    }

    /// Names in folder `path` (without "." and ".."), or [] when it does not exist.
    static func listDirectory(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else {
            if errno == ENOENT { return [] }
            throw ioError("opendir", path)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { throw ioError("readdir", path) }
                break
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Call `body` with the name and the lstat result of each entry of folder `path` (without
    /// "." and ".."), stat'ing relative to the open folder (fstatat with AT_SYMLINK_NOFOLLOW),
    /// which is cheaper than lstat of full paths. Does nothing when the folder does not exist;
    /// an entry removed meanwhile is skipped.
    static func forEachEntryStatus(_ path: String, _ body: (UnsafePointer<CChar>, stat) throws -> Void) throws {
        guard let dir = opendir(path) else {
            if errno == ENOENT { return }
            throw ioError("opendir", path)
        }
        defer { closedir(dir) }
        let fd = dirfd(dir)
        var st = stat()
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { throw ioError("readdir", path) }
                return
            }
            try withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                try pointer.withMemoryRebound(to: CChar.self, capacity: 256) { name in
                    if name[0] == 0x2E && (name[1] == 0 || (name[1] == 0x2E && name[2] == 0)) { return }
                    guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
                        if errno == ENOENT { return }
                        throw ioError("fstatat", path + "/" + String(cString: name))
                    }
                    try body(name, st)
                }
            }
        }
    }

    /// A name for a temporary file in the same folder as its target: the prefix, 16 random
    /// hexadecimal digits and a hint of what it will become.
    static func temporaryName(for targetName: String) -> String {
        var random = [UInt8](repeating: 0, count: 8)
        random.withUnsafeMutableBytes { SystemRandomSource().fill($0) }
        return temporaryPrefix + StoreHex.encode(random) + "-" + targetName
    }
}

/// An flock(2) lock on the store's lock file, held until ``release()`` or deinit.
///
/// Each lock opens the lock file anew, so two locks in one process (two threads, or two
/// store objects) exclude each other exactly as two processes do. A process killed with
/// SIGKILL loses its lock at once (the kernel closes the descriptor).
internal final class StoreLock {
    private var fd: Int32

    /// Block until the lock is held: `exclusive` for writers, shared for readers.
    ///
    /// - Throws: `RSAError.storeIOError` when the lock file cannot be opened or locked.
    init(path: String, exclusive: Bool) throws {
        var fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 && (errno == EACCES || errno == EROFS) {
            // A read-only store can still be read under a shared lock.
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        }
        guard fd >= 0 else { throw StoreFileSystem.ioError("open", path) }
        while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            if errno == EINTR { continue }
            let code = errno
            close(fd)
            throw StoreFileSystem.ioError("flock", path, errno: code)
        }
        self.fd = fd
    }

    /// Release the lock (closing the descriptor). Idempotent.
    func release() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}

/// Lower-case hexadecimal.
internal enum StoreHex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lower-case hexadecimal, two digits per byte.
    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `text` is exactly `count` lower-case hexadecimal digits.
    static func isLowerHex(_ text: Substring, count: Int) -> Bool {
        text.utf8.count == count && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
