#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// ASCII armor for containers sent over text channels:
///
///     -----BEGIN RSAKIT MESSAGE-----
///     base64 of the container, 64 columns
///     -----END RSAKIT MESSAGE-----
enum Armor {
    static let beginLine = "-----BEGIN RSAKIT MESSAGE-----"
    static let endLine = "-----END RSAKIT MESSAGE-----"
}

/// Streams bytes out as armor: 48 input bytes per 64-column line.
struct ArmorEncodingSink<Inner: RSAByteSink>: RSAByteSink {
    var inner: Inner
    private var pending: [UInt8] = []

    init(_ inner: Inner) throws {
        self.inner = inner
        try self.inner.write(Array((Armor.beginLine + "\n").utf8))
    }

    mutating func write(_ bytes: [UInt8]) throws {
        pending += bytes
        let whole = pending.count / 48 * 48
        guard whole > 0 else { return }
        var text = ""
        var offset = 0
        while offset < whole {
            text += Data(pending[offset..<(offset + 48)]).base64EncodedString() + "\n"
            offset += 48
        }
        pending.removeFirst(whole)
        try inner.write(Array(text.utf8))
    }

    /// Write the last partial line and the END line.
    mutating func finish() throws {
        var text = pending.isEmpty ? "" : Data(pending).base64EncodedString() + "\n"
        text += Armor.endLine + "\n"
        pending = []
        try inner.write(Array(text.utf8))
    }
}

/// Reads armored input and yields the decoded bytes, line by line.
struct ArmorDecodingSource<Inner: RSAByteSource>: RSAByteSource {
    var inner: Inner
    private var buffered: [UInt8] = []
    private var decoded: [UInt8] = []
    private var sawBegin = false
    private var sawEnd = false
    private var lineNumber = 0

    init(_ inner: Inner) { self.inner = inner }

    /// The next text line without its line end, or nil at end of input.
    private mutating func nextLine() throws -> String? {
        while true {
            if let newline = buffered.firstIndex(of: 0x0A) {
                let line = Array(buffered[..<newline])
                buffered.removeFirst(newline + 1)
                lineNumber += 1
                return String(decoding: line, as: UTF8.self).trimmingWhitespace()
            }
            let piece = try inner.read(upTo: 65536)
            if piece.isEmpty {
                guard !buffered.isEmpty else { return nil }
                let line = buffered
                buffered = []
                lineNumber += 1
                return String(decoding: line, as: UTF8.self).trimmingWhitespace()
            }
            buffered += piece
            if buffered.count > 1 << 20 && !buffered.contains(0x0A) {
                throw CLIFailure("armored input has a line longer than 1 MiB", .dataError)
            }
        }
    }

    mutating func read(upTo maximumCount: Int) throws -> [UInt8] {
        while decoded.isEmpty && !sawEnd {
            guard let line = try nextLine() else {
                throw CLIFailure("armored input ends without '\(Armor.endLine)' (truncated)", .dataError)
            }
            if !sawBegin {
                if line == Armor.beginLine { sawBegin = true }
                continue
            }
            if line == Armor.endLine { sawEnd = true; break }
            if line.isEmpty { continue }
            guard let data = Data(base64Encoded: line) else {
                throw CLIFailure("armored input has invalid base64 on line \(lineNumber)", .dataError)
            }
            decoded += data
        }
        let n = min(maximumCount, decoded.count)
        defer { decoded.removeFirst(n) }
        return Array(decoded[0..<n])
    }
}
