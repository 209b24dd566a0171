#if canImport(Glibc)
import Glibc
#endif
import Foundation
import RSAKit

/// Opening the command's input: a file (`--in FILE`) or standard input (absent or `-`).
struct InputFile {
    let fileDescriptor: Int32
    let path: String?
    /// (st_dev, st_ino) of a regular file, to refuse writing output over the input.
    let identity: (UInt, UInt)?

    static func open(_ path: String?) throws -> InputFile {
        guard let path, path != "-" else {
            return InputFile(fileDescriptor: STDIN_FILENO, path: nil, identity: nil)
        }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            let reason = String(cString: strerror(code)).lowercased()
            throw CLIFailure("cannot read input file '\(path)': \(reason)", code == ENOENT ? .notFound : .failure)
        }
        var info = stat()
        var identity: (UInt, UInt)?
        if fstat(fd, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR {
                _ = Glibc.close(fd)
                throw CLIFailure("cannot read input file '\(path)': is a directory", .failure)
            }
            identity = (UInt(info.st_dev), UInt(info.st_ino))
        }
        return InputFile(fileDescriptor: fd, path: path, identity: identity)
    }

    func close() {
        if path != nil { _ = Glibc.close(fileDescriptor) }
    }
}

/// The command's output: standard output (absent or `-`), or a file written through a
/// temporary file in the same folder and renamed into place only on success, so that
/// nothing is left at the path when the command fails.
final class OutputFile {
    let fileDescriptor: Int32
    let path: String?
    private let temporaryPath: String?
    private var finished = false

    /// - Parameters:
    ///   - path: the destination, or nil / "-" for standard output.
    ///   - input: the command's input, to refuse an output that is the same file.
    ///   - mode: permissions for a new file (0600 for private keys).
    init(_ path: String?, input: InputFile?, mode: mode_t = 0o644) throws {
        guard let path, path != "-" else {
            fileDescriptor = STDOUT_FILENO
            self.path = nil
            temporaryPath = nil
            return
        }
        var info = stat()
        if stat(path, &info) == 0 {
            if let identity = input?.identity, identity == (UInt(info.st_dev), UInt(info.st_ino)) {
                throw CLIFailure("output file '\(path)' is the input file; write to another file", .usage)
            }
            if (info.st_mode & S_IFMT) == S_IFDIR {
                throw CLIFailure("cannot write output file '\(path)': is a directory", .failure)
            }
        }
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let temporary = folder + "/." + url.lastPathComponent + ".rsakit-tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno)).lowercased()
            throw CLIFailure("cannot write output file '\(path)': \(reason)", .failure)
        }
        fileDescriptor = fd
        self.path = path
        temporaryPath = temporary
    }

    /// Make the output visible: fsync and rename the temporary file onto the path.
    func commit() throws {
        finished = true
        guard let temporaryPath, let path else { return }
        defer { _ = Glibc.close(fileDescriptor) }
        guard fsync(fileDescriptor) == 0, rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno)).lowercased()
            unlink(temporaryPath)
            throw CLIFailure("cannot write output file '\(path)': \(reason)", .failure)
        }
    }

    /// Remove the temporary file (on failure). Safe to call twice.
    func discard() {
        guard !finished else { return }
        finished = true
        if let temporaryPath {
            _ = Glibc.close(fileDescriptor)
            unlink(temporaryPath)
        }
    }

    deinit { discard() }
}

/// A source that first yields bytes already read (a peeked prefix), then the inner source.
struct PrefixedSource<Inner: RSAByteSource>: RSAByteSource {
    var prefix: [UInt8]
    var inner: Inner

    mutating func read(upTo maximumCount: Int) throws -> [UInt8] {
        if !prefix.isEmpty {
            let n = min(maximumCount, prefix.count)
            defer { prefix.removeFirst(n) }
            return Array(prefix[0..<n])
        }
        return try inner.read(upTo: maximumCount)
    }

    var remainingByteCount: Int? { inner.remainingByteCount.map { $0 + prefix.count } }
}

/// Read a whole (small) file, such as a key file.
func readWholeFile(_ path: String, what: String) throws -> [UInt8] {
    let input = try InputFile.open(path)
    defer { input.close() }
    var source = FileDescriptorSource(fileDescriptor: input.fileDescriptor)
    // Key files may hold private keys: every buffer is zeroed before it is released, on
    // every path, growth included (an array that outgrows its storage leaves the old copy
    // in freed memory, so growing is done by hand, wiping the old storage).
    var bytes: [UInt8] = []
    bytes.reserveCapacity(16 << 10)
    do {
        while true {
            var piece = try source.read(upTo: 65536)
            defer { RSAKitProcessHardening.wipe(&piece) }
            if piece.isEmpty { break }
            if bytes.count + piece.count > bytes.capacity {
                var grown: [UInt8] = []
                grown.reserveCapacity(max(2 * bytes.capacity, bytes.count + piece.count))
                grown += bytes
                RSAKitProcessHardening.wipe(&bytes)
                bytes = grown
            }
            bytes += piece
            if bytes.count > 16 << 20 {
                throw CLIFailure("\(what) '\(path)' is larger than 16 MiB; not a key file", .dataError)
            }
        }
    } catch {
        RSAKitProcessHardening.wipe(&bytes)
        throw error
    }
    return bytes
}

/// Write `text` to standard error.
func printError(_ text: String) {
    var sink = FileDescriptorSink(fileDescriptor: STDERR_FILENO)
    try? sink.write(Array(text.utf8))
}

/// Write `text` to standard output.
func printOutput(_ text: String) throws {
    var sink = FileDescriptorSink(fileDescriptor: STDOUT_FILENO)
    try sink.write(Array(text.utf8))
}
