#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A private temporary file that holds plaintext until its authentication tag has been
/// checked, so that memory stays bounded and nothing unauthenticated reaches the output.
///
/// Created 0600 with `O_EXCL | O_NOFOLLOW` under a random name and unlinked at once: no path
/// names it while it is in use, and the kernel frees it when the descriptor is closed, even
/// if the process is killed. On release it is truncated to 0 bytes before it is closed.
final class PlaintextSpool {
    let fileDescriptor: Int32

    /// - Parameter directory: where to create it (default: `$TMPDIR`, else `/tmp`).
    /// - Throws: ``RSAFileDescriptorError`` ("create temporary file") when it cannot be created.
    init(directory: String? = nil) throws {
        let folder =
            directory ?? (getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
        var name = [UInt8](repeating: 0, count: 12)
        name.withUnsafeMutableBytes { SystemRandomSource().fill($0) }
        let suffix = name.map { String($0, radix: 16) }.joined()
        let path = folder + "/.rsakit-spool-\(getpid())-" + suffix
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw RSAFileDescriptorError(operation: "create temporary file", code: errno) }
        unlink(path)
        fileDescriptor = fd
    }

    deinit {
        _ = ftruncate(fileDescriptor, 0)
        close(fileDescriptor)
    }

    /// Append `bytes`.
    /// - Throws: ``RSAFileDescriptorError`` on a failed write (a full disk, for example).
    func write(_ bytes: [UInt8]) throws {
        var sink = RSAFileDescriptorSink(fileDescriptor: fileDescriptor)
        try sink.write(bytes)
    }

    /// Copy everything written so far to `sink`, in 64 KiB pieces.
    func copy<Sink: RSAByteSink>(to sink: inout Sink) throws {
        guard lseek(fileDescriptor, 0, SEEK_SET) == 0 else {
            throw RSAFileDescriptorError(operation: "seek", code: errno)
        }
        var source = RSAFileDescriptorSource(fileDescriptor: fileDescriptor)
        while true {
            let piece = try source.read(upTo: 1 << 16)
            if piece.isEmpty { return }
            try sink.write(piece)
        }
    }
}
