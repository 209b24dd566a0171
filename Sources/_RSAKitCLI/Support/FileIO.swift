#if canImport(Glibc)
import Glibc
#endif
import RSAKit

/// Opening the command's input: a file (`--in FILE`) or standard input (absent or `-`).
struct InputFile {
    let fileDescriptor: Int32
    let path: String?
    /// (st_dev, st_ino) of a regular file, to refuse writing output over the input.
    let identity: (UInt, UInt)?

    static func open(_ path: String?, what: String = "input file") throws -> InputFile {
        guard let path, path != "-" else {
            return InputFile(fileDescriptor: STDIN_FILENO, path: nil, identity: nil)
        }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            let reason = String(cString: strerror(code)).lowercased()
            throw CLIFailure("cannot read \(what) '\(path)': \(reason)", code == ENOENT ? .notFound : .failure)
        }
        var info = stat()
        var identity: (UInt, UInt)?
        if fstat(fd, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR {
                _ = Glibc.close(fd)
                throw CLIFailure("cannot read \(what) '\(path)': is a directory", .failure)
            }
            identity = (UInt(info.st_dev), UInt(info.st_ino))
        }
        return InputFile(fileDescriptor: fd, path: path, identity: identity)
    }

    func close() {
        if path != nil { _ = Glibc.close(fileDescriptor) }
    }
}

/// The command's output: standard output (absent or `-`), or a path opened with the
/// library's safe rules (`RSAOutputFile`: temporary file renamed into place on success for
/// regular files, in-place writes for devices, FIFOs and inherited descriptors, symbolic
/// links followed, temporary removed on failure and on SIGINT/SIGTERM/SIGHUP/SIGPIPE).
final class OutputFile {
    private let file: RSAOutputFile
    var fileDescriptor: Int32 { file.fileDescriptor }
    let path: String?

    /// - Parameters:
    ///   - path: the destination, or nil / "-" for standard output.
    ///   - input: the command's input, to refuse an output that is the same file.
    ///   - mode: 0o600 for private-key exports (the finished file is always 0600); any other
    ///     value keeps the usual rules (replaced file's bits, else 0666 less the umask).
    init(_ path: String?, input: InputFile?, mode: mode_t = 0o644) throws {
        guard let path, path != "-" else {
            file = RSAOutputFile.standardOutput()
            self.path = nil
            return
        }
        file = try RSAOutputFile(
            path: path, permissions: mode == 0o600 ? .privateKey : .standard,
            input: input?.fileDescriptor)
        self.path = path
    }

    /// Make the output visible (rename the temporary file onto the path).
    func commit() throws { try file.commit() }

    /// Remove the temporary file (on failure). Safe to call twice.
    func discard() { file.discard() }
}

/// Read a whole (small) file, such as a key file.
func readWholeFile(_ path: String, what: String) throws -> [UInt8] {
    let input = try InputFile.open(path, what: what)
    defer { input.close() }
    var source = RSAFileDescriptorSource(fileDescriptor: input.fileDescriptor)
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
    var sink = RSAFileDescriptorSink(fileDescriptor: STDERR_FILENO)
    try? sink.write(Array(text.utf8))
}

/// Write `rsakit: warning: MESSAGE` and a newline to standard error, with the message's
/// control characters escaped (``controlsEscaped(_:)``).
func printWarning(_ message: String) {
    printError("rsakit: warning: " + controlsEscaped(message) + "\n")
}

/// Write `text` to standard output.
func printOutput(_ text: String) throws {
    var sink = RSAFileDescriptorSink(fileDescriptor: STDOUT_FILENO)
    try sink.write(Array(text.utf8))
}

/// The certificates of a DER, PEM or PEM-bundle file (never empty), or `CLIFailure` naming
/// the file: 66 when it cannot be found, 65 "cannot load <what> 'PATH': ..." when it holds
/// no certificate or a malformed one.
func readCertificateFile(_ path: String, what: String = "certificate file") throws -> [X509Certificate] {
    let bytes = try readWholeFile(path, what: what)
    do {
        return try X509Certificate.certificates(from: bytes)
    } catch let error as RSAError {
        throw CLIFailure("cannot load \(what) '\(path)': \(CLIFailure.message(for: error))", .dataError)
    }
}
