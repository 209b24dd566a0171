#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where chunked encryption and decryption read their input.
public protocol RSAByteSource {
    /// Read up to `maximumCount` bytes (>= 1). Returns fewer when less is available right
    /// now; returns an empty array only at end of input.
    /// - Throws: any I/O error, passed through unchanged.
    mutating func read(upTo maximumCount: Int) throws -> [UInt8]

    /// How many bytes remain, when the source knows it in advance (a regular file or an
    /// array), else nil (a pipe). Lets decryption reject a bad total length before any
    /// private-key operation.
    var remainingByteCount: Int? { get }
}

extension RSAByteSource {
    /// Unknown by default (nil).
    public var remainingByteCount: Int? { nil }

    /// Read exactly `count` bytes, or fewer only at end of input.
    package mutating func readFully(_ count: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            let piece = try read(upTo: count - out.count)
            if piece.isEmpty { break }
            out.append(contentsOf: piece)
        }
        return out
    }
}

/// Where chunked encryption and decryption write their output, in order.
public protocol RSAByteSink {
    /// Write all of `bytes`.
    /// - Throws: any I/O error, passed through unchanged.
    mutating func write(_ bytes: [UInt8]) throws
}

/// An in-memory source over a byte array.
public struct RSAArrayByteSource: RSAByteSource, Sendable {
    private let bytes: [UInt8]
    private var offset = 0

    /// A source that yields `bytes` and then end of input.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next up to `maximumCount` bytes of the array; empty at its end. Never throws.
    public mutating func read(upTo maximumCount: Int) throws -> [UInt8] {
        let end = min(bytes.count, offset + maximumCount)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }

    /// Bytes not yet read.
    public var remainingByteCount: Int? { bytes.count - offset }
}

/// An in-memory sink that appends to ``bytes``.
public struct RSAArrayByteSink: RSAByteSink, Sendable {
    /// Everything written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty sink.
    public init() {}

    /// Append `bytes` to ``bytes``. Never throws.
    public mutating func write(_ bytes: [UInt8]) throws { self.bytes.append(contentsOf: bytes) }
}

/// An I/O failure on a file descriptor: which operation, and the `errno` text.
public struct RSAFileDescriptorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// "read" or "write".
    public let operation: String
    /// The C `errno` value.
    public let code: Int32

    /// For example "read failed: bad file descriptor".
    public var description: String {
        "\(operation) failed: \(String(cString: strerror(code)).lowercased())"
    }
}

/// A source reading a POSIX file descriptor (a file, a pipe, standard input). Does not
/// close the descriptor.
public struct RSAFileDescriptorSource: RSAByteSource, Sendable {
    /// The descriptor read from.
    public let fileDescriptor: Int32
    private var knownRemaining: Int?

    /// Read from `fileDescriptor`. For a regular file the remaining size is taken from
    /// `fstat` and the current offset.
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        var info = stat()
        if fstat(fileDescriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
            let position = lseek(fileDescriptor, 0, SEEK_CUR)
            knownRemaining = position >= 0 ? Int(info.st_size) - Int(position) : nil
        }
    }

    /// Bytes left in a regular file (its size minus what was read), nil for pipes and terminals.
    public var remainingByteCount: Int? { knownRemaining }

    /// One `read(2)` of up to `maximumCount` bytes (retried on EINTR); empty at end of file.
    /// - Throws: ``RSAFileDescriptorError`` with the `errno` of a failed read.
    public mutating func read(upTo maximumCount: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: maximumCount)
        while true {
            let got = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, maximumCount) }
            if got < 0 {
                if errno == EINTR { continue }
                throw RSAFileDescriptorError(operation: "read", code: errno)
            }
            buffer.removeLast(maximumCount - got)
            if let remaining = knownRemaining { knownRemaining = max(0, remaining - got) }
            return buffer
        }
    }
}

/// A sink writing to a POSIX file descriptor. Does not close the descriptor.
public struct RSAFileDescriptorSink: RSAByteSink, Sendable {
    /// The descriptor written to.
    public let fileDescriptor: Int32

    /// Write to `fileDescriptor`.
    public init(fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

    /// Write all of `bytes`, looping over short writes and EINTR.
    /// - Throws: ``RSAFileDescriptorError`` with the `errno` of a failed write (EPIPE included).
    public mutating func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let wrote = Glibc.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if wrote < 0 {
                    if errno == EINTR { continue }
                    throw RSAFileDescriptorError(operation: "write", code: errno)
                }
                offset += wrote
            }
        }
    }
}
