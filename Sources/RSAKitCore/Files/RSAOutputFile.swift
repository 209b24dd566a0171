#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
internal import CRSAKitShims

/// An output path opened for writing the way a careful Unix tool does (`openssl -out`, a
/// shell redirection, `age -o`), so that nothing at the path is damaged and nothing secret is
/// left behind.
///
/// Rules:
/// - A **new path or an existing regular file** is written through a temporary file in the
///   same folder, mode 0600 while it is written, since it may hold plaintext or a private key.
///   Where the file system has `O_TMPFILE` (ext4, xfs, btrfs, tmpfs) the temporary has no name
///   at all until it is complete, so nothing is left behind even by SIGKILL, an OOM kill or a
///   power loss; ``commit()`` fsyncs it, gives it its final permission bits and links it into
///   place (through `/proc/self/fd/N`; an existing file is replaced by linking to a named
///   temporary and renaming that over it). Elsewhere the temporary is named
///   `.NAME.rsakit-tmp-PID-RANDOM` and ``commit()`` renames it onto the path; a named temporary
///   left by a process that no longer exists (killed by SIGKILL) and unmodified for a minute is
///   removed the next time an output is opened in that folder. ``discard()`` (or deinit, or a
///   terminating signal) removes the temporary. Until ``commit()`` the path keeps its old
///   contents, or stays absent.
/// - The finished file gets the replaced file's permission bits (and, best effort, its owner
///   and group), or for a new file 0666 less the umask; with ``Permissions/privateKey`` it is
///   always 0600.
/// - A **symbolic link** is followed: the file it points to (after the whole chain, even if
///   that file does not exist yet) is the one written, with its temporary in the target's folder.
/// - **Anything else** (character or block device such as `/dev/null`, FIFO, socket) is opened
///   and written in place, as a shell redirection does. `/dev/stdout`, `/dev/stderr`,
///   `/dev/fd/N` and `/proc/self/fd/N` (process substitution `>(...)`) write to the
///   process's own descriptor N (duplicated), whatever it is connected to.
/// - An existing file the user may not write is refused with "permission denied" (checked
///   with the effective ids, as the shell's open would), a folder is refused, and an output that
///   is the same file as the command's input is refused before anything is written.
/// - While a temporary file exists it is registered with a SIGINT, SIGTERM, SIGHUP and
///   SIGPIPE handler that unlinks it (async-signal-safe `unlink(2)`) and re-raises the signal
///   with its default action. Signals that are ignored or handled elsewhere when the first
///   temporary is made are left alone (`nohup` keeps working).
///
/// Not thread-safe: one writer owns an instance. The bytes themselves go through
/// ``fileDescriptor`` (for example with `RSAFileDescriptorSink`).
public final class RSAOutputFile {
    /// The permission bits the finished file gets.
    public enum Permissions: Sendable, Hashable {
        /// The replaced file's bits, or 0666 less the umask for a new file.
        case standard
        /// Always 0600 (private-key exports), whatever was at the path.
        case privateKey
    }

    /// How the output reaches its destination.
    public enum Method: Sendable, Hashable {
        /// Standard output (descriptor 1), written in place.
        case standardOutput
        /// A temporary file (unnamed where the file system allows it) moved onto
        /// ``destinationPath`` by ``commit()``.
        case temporaryAndRename
        /// The destination (a device, FIFO, socket or an inherited descriptor) written in place;
        /// bytes written before a failure cannot be taken back.
        case inPlace
    }

    /// The descriptor to write the output to.
    public let fileDescriptor: Int32
    /// The path as given (nil for standard output).
    public let path: String?
    /// The file actually written: `path` with symbolic links followed (nil for standard output).
    public let destinationPath: String?
    /// How the output reaches the destination.
    public let method: Method
    /// The temporary file's name while it exists (``Method/temporaryAndRename`` only); nil
    /// while it is unnamed (`O_TMPFILE`).
    public private(set) var temporaryPath: String?
    /// Whether the temporary has no name until ``commit()`` links it (`O_TMPFILE`).
    public let isUnnamed: Bool

    private let finalMode: mode_t
    private let owner: (uid: uid_t, gid: gid_t)?
    private var signalSlot: Int32 = -1
    private var finished = false

    /// The longest symbolic-link chain followed (as Linux's ELOOP limit).
    public static let maximumSymbolicLinks = 40

    /// An output that writes to standard output (descriptor 1); ``commit()`` and
    /// ``discard()`` do nothing and the descriptor is never closed.
    public static func standardOutput() -> RSAOutputFile {
        RSAOutputFile(standardOutputDescriptor: ())
    }

    private init(standardOutputDescriptor: Void) {
        fileDescriptor = STDOUT_FILENO
        path = nil
        destinationPath = nil
        method = .standardOutput
        temporaryPath = nil
        finalMode = 0
        owner = nil
        isUnnamed = false
    }

    /// Open `path` for writing under the rules described on ``RSAOutputFile``.
    ///
    /// - Parameters:
    ///   - path: the output path (relative paths are relative to the current folder).
    ///   - permissions: ``Permissions/standard`` or ``Permissions/privateKey`` (0600).
    ///   - input: a descriptor the command reads from; when it is the same regular file as
    ///     the destination, the output is refused (writing would destroy the input).
    /// - Throws: `RSAError.outputFileIsInput(path:)` when the destination is the input file;
    ///   `RSAError.outputFileFailed(path:reason:)` with a lower-case reason ("permission
    ///   denied", "is a directory", "no such file or directory", "too many levels of symbolic
    ///   links", the `errno` text of a failed open) when the path cannot be written. Nothing
    ///   is created at the path in either case.
    public init(path: String, permissions: Permissions = .standard, input: Int32? = nil) throws {
        self.path = path
        if let descriptor = try RSAOutputFile.inheritedDescriptor(path) {
            let fd = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
            guard fd >= 0 else { throw RSAOutputFile.failure(path, errno) }
            fileDescriptor = fd
            destinationPath = path
            method = .inPlace
            finalMode = 0
            owner = nil
            isUnnamed = false
            return
        }
        let destination = try RSAOutputFile.resolveSymbolicLinks(path)
        destinationPath = destination
        var info = stat()
        let exists = stat(destination, &info) == 0
        if !exists && errno != ENOENT { throw RSAOutputFile.failure(path, errno) }
        if exists, let input, RSAOutputFile.isSameRegularFile(info, input) {
            throw RSAError.outputFileIsInput(path: path)
        }
        if exists && (info.st_mode & S_IFMT) == S_IFDIR {
            throw RSAError.outputFileFailed(path: path, reason: "is a directory")
        }
        if exists && (info.st_mode & S_IFMT) != S_IFREG {
            // Device, FIFO, socket: written in place, as `> PATH` does (O_TRUNC means nothing here).
            let fd = open(destination, O_WRONLY | O_CLOEXEC | O_NOCTTY)
            guard fd >= 0 else { throw RSAOutputFile.failure(path, errno) }
            fileDescriptor = fd
            method = .inPlace
            finalMode = 0
            owner = nil
            isUnnamed = false
            return
        }
        if exists && faccessat(AT_FDCWD, destination, W_OK, AT_EACCESS) != 0 {
            throw RSAOutputFile.failure(path, errno)
        }
        method = .temporaryAndRename
        switch permissions {
        case .privateKey: finalMode = 0o600
        case .standard: finalMode = exists ? info.st_mode & 0o7777 : 0o666 & ~RSAOutputFile.currentUmask()
        }
        owner = exists && (info.st_uid != geteuid() || info.st_gid != getegid()) ? (info.st_uid, info.st_gid) : nil
        let folder = RSAOutputFile.split(destination).folder
        RSAOutputFile.removeStaleTemporaries(in: folder)
        if !RSAOutputFile.unnamedTemporariesDisabled, case let fd = rsakit_open_unnamed(folder), fd >= 0 {
            fileDescriptor = fd
            isUnnamed = true
            return
        }
        isUnnamed = false
        let temporary = RSAOutputFile.namedTemporary(for: destination)
        // Registered before it exists, so that no signal can leave it behind.
        signalSlot = rsakit_tempfile_register(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            rsakit_tempfile_unregister(signalSlot)
            throw RSAOutputFile.failure(path, code)
        }
        fileDescriptor = fd
        temporaryPath = temporary
    }

    /// Make the output final. For ``Method/temporaryAndRename``: fsync the temporary file,
    /// give it its final owner (best effort) and permission bits, link (unnamed) or rename it
    /// onto ``destinationPath`` and fsync the folder. For in-place outputs: close the descriptor.
    /// Calling it again, or after ``discard()``, does nothing.
    ///
    /// - Throws: `RSAError.outputFileFailed(path:reason:)` when fsync or rename fails; the
    ///   temporary file is removed then and the path keeps its old contents.
    public func commit() throws {
        guard !finished else { return }
        finished = true
        switch method {
        case .standardOutput:
            return
        case .inPlace:
            _ = close(fileDescriptor)
            return
        case .temporaryAndRename:
            break
        }
        guard let destinationPath, let path else { return }
        defer {
            rsakit_tempfile_unregister(signalSlot)
            self.temporaryPath = nil
        }
        if let owner { _ = fchown(fileDescriptor, owner.uid, owner.gid) }
        guard fsync(fileDescriptor) == 0, fchmod(fileDescriptor, finalMode) == 0, moveIntoPlace(destinationPath) else {
            let code = errno
            _ = close(fileDescriptor)
            if let temporaryPath { unlink(temporaryPath) }
            throw RSAOutputFile.failure(path, code)
        }
        _ = close(fileDescriptor)
        let folder = open(RSAOutputFile.split(destinationPath).folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            _ = close(folder)
        }
    }

    /// The complete, fsynced temporary onto `destination`: renamed when it is named; linked
    /// when it is unnamed, directly where nothing is at `destination`, else to a named
    /// temporary that is then renamed over it (link cannot replace a file). errno on failure.
    private func moveIntoPlace(_ destination: String) -> Bool {
        if isUnnamed {
            if rsakit_link_unnamed(fileDescriptor, destination) == 0 { return true }
            guard errno == EEXIST else { return false }
            let temporary = RSAOutputFile.namedTemporary(for: destination)
            signalSlot = rsakit_tempfile_register(temporary)
            temporaryPath = temporary
            guard rsakit_link_unnamed(fileDescriptor, temporary) == 0 else { return false }
        }
        return rename(temporaryPath!, destination) == 0
    }

    /// Give up: remove the temporary file (nothing appears at the path) or close an in-place
    /// descriptor (what was written to a device or pipe stays written). Safe to call twice
    /// and after ``commit()``; deinit calls it.
    public func discard() {
        guard !finished else { return }
        finished = true
        switch method {
        case .standardOutput:
            return
        case .inPlace:
            _ = close(fileDescriptor)
        case .temporaryAndRename:
            _ = close(fileDescriptor)
            if let temporaryPath { unlink(temporaryPath) }
            rsakit_tempfile_unregister(signalSlot)
            temporaryPath = nil
        }
    }

    deinit { discard() }

    /// The number of temporary files currently registered for removal on a signal (tests).
    internal static var registeredTemporaryCount: Int { Int(rsakit_tempfile_count()) }

    /// Tests set it to exercise the named temporaries of file systems without `O_TMPFILE`.
    nonisolated(unsafe) internal static var unnamedTemporariesDisabled = false

    // MARK: Temporaries

    /// `.NAME.rsakit-tmp-PID-RANDOM` beside `destination`.
    private static func namedTemporary(for destination: String) -> String {
        let (folder, name) = split(destination)
        return folder + "/." + name + temporaryMarker + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    private static let temporaryMarker = ".rsakit-tmp-"

    /// Remove the named temporaries in `folder` that a killed process left (SIGKILL, an OOM
    /// kill, a power loss: no handler runs then): regular files of this user named
    /// `.NAME.rsakit-tmp-PID-RANDOM` whose PID no longer exists and which nobody has written
    /// for a minute (a writer in another PID namespace that shares the folder keeps writing).
    /// Best effort: what cannot be read or removed is left alone.
    private static func removeStaleTemporaries(in folder: String) {
        guard let directory = opendir(folder) else { return }
        defer { closedir(directory) }
        let now = time(nil)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix("."), let marker = name.ranges(of: temporaryMarker).last else { continue }
            let fields = name[marker.upperBound...].split(separator: "-")
            guard fields.count == 2, let pid = pid_t(fields[0]), pid > 0, UInt32(fields[1]) != nil,
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            var info = stat()
            let path = folder + "/" + name
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid(),
                now - info.st_mtim.tv_sec >= 60
            else { continue }
            unlink(path)
        }
    }

    // MARK: Path rules

    /// The descriptor number N when `path` names one of this process's descriptors:
    /// /dev/stdout (1), /dev/stderr (2), /dev/fd/N, /proc/self/fd/N, /proc/PID/fd/N for this
    /// process, directly or through symbolic links.
    private static func inheritedDescriptor(_ path: String) throws -> Int32? {
        var current = path
        for _ in 0...maximumSymbolicLinks {
            if let number = descriptorNumber(current) { return number }
            var info = stat()
            guard lstat(current, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK,
                let target = readLink(current)
            else { return nil }
            current = target.hasPrefix("/") ? target : split(current).folder + "/" + target
        }
        return nil
    }

    private static func descriptorNumber(_ path: String) -> Int32? {
        switch path {
        case "/dev/stdout": return STDOUT_FILENO
        case "/dev/stderr": return STDERR_FILENO
        default: break
        }
        for prefix in ["/dev/fd/", "/proc/self/fd/", "/proc/\(getpid())/fd/", "/proc/thread-self/fd/"]
        where path.hasPrefix(prefix) {
            return Int32(path.dropFirst(prefix.count))
        }
        return nil
    }

    /// `path` with every symbolic link of its last component followed (a dangling link gives
    /// the path it points to, which the shell would create).
    private static func resolveSymbolicLinks(_ path: String) throws -> String {
        var current = path
        for _ in 0..<maximumSymbolicLinks {
            var info = stat()
            guard lstat(current, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return current }
            guard let target = readLink(current) else { throw failure(path, errno) }
            current = target.hasPrefix("/") ? target : split(current).folder + "/" + target
        }
        throw failure(path, ELOOP)
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, Int(PATH_MAX))
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// (folder, last component); the folder is "." for a bare name.
    private static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }

    private static func isSameRegularFile(_ info: stat, _ descriptor: Int32) -> Bool {
        var other = stat()
        guard fstat(descriptor, &other) == 0, (other.st_mode & S_IFMT) == S_IFREG else { return false }
        return other.st_dev == info.st_dev && other.st_ino == info.st_ino
    }

    /// The process's umask, read without changing it where Linux reports it.
    private static func currentUmask() -> mode_t {
        if let file = fopen("/proc/self/status", "r") {
            defer { fclose(file) }
            var line = [CChar](repeating: 0, count: 256)
            while fgets(&line, Int32(line.count), file) != nil {
                let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if text.hasPrefix("Umask:"),
                    let value = mode_t(text.dropFirst(6).trimmingCharacters(), radix: 8)
                {
                    return value
                }
            }
        }
        let old = umask(0o022)
        umask(old)
        return old
    }

    private static func failure(_ path: String, _ code: Int32) -> RSAError {
        .outputFileFailed(path: path, reason: String(cString: strerror(code)).lowercased())
    }
}

private extension Substring {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == "\n" || $0 == " " || $0 == "\t" }.reversed())
    }
}

extension RSAOutputFile {
    /// Tell the terminating-signal handler (the one that removes live temporaries) whether a
    /// line without its newline is open on stderr, such as a progress line redrawn with "\r":
    /// while it is, a SIGINT, SIGTERM, SIGHUP or SIGPIPE first ends that line, so the shell's
    /// prompt starts at column 0. Installs the handler on first use, as a temporary does.
    package static func setOpenLineOnStandardError(_ open: Bool) {
        rsakit_tempfile_set_open_line(open ? 1 : 0)
    }
}
