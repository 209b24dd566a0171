/// ASCII armor for containers sent over text channels (e-mail, chat, JSON strings):
///
///     -----BEGIN RSAKIT MESSAGE-----
///     base64 of the container (RFC 4648 §4), 64 columns
///     -----END RSAKIT MESSAGE-----
///
/// Reading is lenient: text before the BEGIN line (a pasted e-mail) is skipped, CR LF line
/// ends and blank lines are accepted; anything after the END line is ignored.
public enum RSAArmor {
    /// The first line of armor.
    public static let beginLine = "-----BEGIN RSAKIT MESSAGE-----"
    /// The last line of armor.
    public static let endLine = "-----END RSAKIT MESSAGE-----"

    /// Armor `bytes` (one BEGIN line, 64-column base64 lines, one END line, each ending "\n").
    public static func encode(_ bytes: [UInt8]) -> String {
        var sink = RSAArmorEncodingSink(RSAArrayByteSink())
        try! sink.write(bytes)
        try! sink.finish()
        return String(decoding: sink.inner.bytes, as: UTF8.self)
    }

    /// Decode the first armor block found in `text` (text before it is skipped).
    /// - Throws: `RSAError.messageInvalid` when there is no BEGIN line, no END line, a line
    ///   longer than 1 MiB or invalid base64 (naming the line).
    public static func decode(_ text: [UInt8]) throws -> [UInt8] {
        guard beginLineOffset(in: text[...]) != nil else {
            throw RSAError.messageInvalid(reason: "no '\(beginLine)' line found")
        }
        var source = RSAArmorDecodingSource(RSAArrayByteSource(text))
        var out: [UInt8] = []
        while true {
            let piece = try source.read(upTo: 1 << 16)
            if piece.isEmpty { return out }
            out += piece
        }
    }

    /// The offset of a BEGIN line that starts a line in `prefix`, or nil.
    static func beginLineOffset(in prefix: ArraySlice<UInt8>) -> Int? {
        let begin = Array(beginLine.utf8)
        guard prefix.count >= begin.count else { return nil }
        let base = prefix.startIndex
        for start in base...(prefix.endIndex - begin.count)
        where start == base || prefix[start - 1] == 0x0A || prefix[start - 1] == 0x0D {
            if prefix[start..<(start + begin.count)].elementsEqual(begin) { return start - base }
        }
        return nil
    }
}

/// Streams bytes out as armor: 48 input bytes per 64-column line. Call ``finish()`` after
/// the last write.
public struct RSAArmorEncodingSink<Inner: RSAByteSink>: RSAByteSink {
    /// The sink that receives the armor text.
    public private(set) var inner: Inner
    private var pending: [UInt8] = []
    private var started = false

    /// Armor into `inner` (the BEGIN line is written with the first write or at finish).
    public init(_ inner: Inner) { self.inner = inner }

    /// Encode `bytes`; whole 48-byte groups are written as lines at once.
    /// - Throws: the inner sink's errors.
    public mutating func write(_ bytes: [UInt8]) throws {
        try start()
        pending += bytes
        let whole = pending.count / 48 * 48
        guard whole > 0 else { return }
        var text: [UInt8] = []
        text.reserveCapacity(whole / 48 * 65)
        var offset = 0
        while offset < whole {
            text += Array(Base64.encode(Array(pending[offset..<(offset + 48)])).utf8) + [0x0A]
            offset += 48
        }
        pending.removeFirst(whole)
        try inner.write(text)
    }

    /// Write the last partial line and the END line.
    /// - Throws: the inner sink's errors.
    public mutating func finish() throws {
        try start()
        var text = pending.isEmpty ? [] : Array(Base64.encode(pending).utf8) + [0x0A]
        text += Array((RSAArmor.endLine + "\n").utf8)
        pending = []
        try inner.write(text)
    }

    private mutating func start() throws {
        guard !started else { return }
        started = true
        try inner.write(Array((RSAArmor.beginLine + "\n").utf8))
    }
}

/// Reads armored input and yields the decoded bytes, line by line (memory: one line).
public struct RSAArmorDecodingSource<Inner: RSAByteSource>: RSAByteSource {
    private var inner: Inner
    private var buffered: [UInt8] = []
    private var decoded: [UInt8] = []
    private var sawBegin = false
    private var sawEnd = false
    private var lineNumber = 0

    /// Decode the armor in `inner`; text before the BEGIN line is skipped.
    public init(_ inner: Inner) { self.inner = inner }

    /// The next text line without its line end and surrounding blanks, or nil at end of input.
    private mutating func nextLine() throws -> [UInt8]? {
        while true {
            if let newline = buffered.firstIndex(of: 0x0A) {
                let line = Array(buffered[..<newline])
                buffered.removeFirst(newline + 1)
                lineNumber += 1
                return trimmed(line)
            }
            let piece = try inner.read(upTo: 65536)
            if piece.isEmpty {
                guard !buffered.isEmpty else { return nil }
                let line = buffered
                buffered = []
                lineNumber += 1
                return trimmed(line)
            }
            buffered += piece
            if buffered.count > 1 << 20 && !buffered.contains(0x0A) {
                throw RSAError.messageInvalid(reason: "armored input has a line longer than 1 MiB")
            }
        }
    }

    private func trimmed(_ line: [UInt8]) -> [UInt8] {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
        return Array(line.drop(while: blank).reversed().drop(while: blank).reversed())
    }

    /// Up to `maximumCount` decoded bytes; empty after the END line.
    /// - Throws: `RSAError.messageInvalid` for input that ends before the END line (or has no
    ///   BEGIN line), invalid base64 (naming the line) or a line longer than 1 MiB; the
    ///   inner source's errors.
    public mutating func read(upTo maximumCount: Int) throws -> [UInt8] {
        let begin = Array(RSAArmor.beginLine.utf8), end = Array(RSAArmor.endLine.utf8)
        while decoded.isEmpty && !sawEnd {
            guard let line = try nextLine() else {
                throw RSAError.messageInvalid(
                    reason: sawBegin
                        ? "armored input ends without '\(RSAArmor.endLine)' (truncated)"
                        : "no '\(RSAArmor.beginLine)' line found")
            }
            if !sawBegin {
                if line == begin { sawBegin = true }
                continue
            }
            if line == end { sawEnd = true; break }
            if line.isEmpty { continue }
            guard let bytes = try? Base64.decode(line, strict: false) else {
                throw RSAError.messageInvalid(reason: "armored input has invalid base64 on line \(lineNumber)")
            }
            decoded += bytes
        }
        let n = min(maximumCount, decoded.count)
        defer { decoded.removeFirst(n) }
        return Array(decoded[0..<n])
    }
}

// Sendable whenever the wrapped sink or source is.
extension RSAArmorEncodingSink: Sendable where Inner: Sendable {}
extension RSAArmorDecodingSource: Sendable where Inner: Sendable {}
