/// Tells the message formats apart at the start of an input, reading only a bounded prefix:
///
/// 1. an rsakit container, by its 8-byte magic (versions 1 and 2);
/// 2. ASCII armor, by its BEGIN line at the start of a line within the first 8 KiB (so text
///    before it, such as a pasted e-mail, is skipped), then the container inside it;
/// 3. anything else is raw blocks.
///
/// Apple's RSA-OAEP + AES-GCM output has no header and looks like raw blocks: it is read only
/// when the caller asks for it.
package struct MessageReader {
    /// What the input holds.
    package enum Detected {
        /// A container; the source is positioned just after its header.
        case container(RSAMessageContainer.Header)
        /// Not a container (raw blocks, or whatever the caller was told); the source is at
        /// the first byte of the (de-armored) input.
        case other
    }

    /// How far into the input to look for an armor BEGIN line after leading text.
    static let armorSearchByteCount = 8192

    /// The detected form, the source to read the body from, and whether it was armored.
    package let detected: Detected
    let armored: Bool
    /// True when the input (after armor) was empty.
    package let isEmpty: Bool
    package var source: AnyByteSource

    /// Read the start of `input` and classify it.
    /// - Throws: `RSAError.containerInvalid` for a container magic followed by a bad header;
    ///   armor and I/O errors of the source.
    package init<Source: RSAByteSource>(_ input: Source) throws {
        var base = input
        var prefix = try base.readFully(RSAMessageContainer.headerByteCount)
        if !RSAMessageContainer.hasMagic(prefix) && prefix.count == RSAMessageContainer.headerByteCount {
            prefix += try base.readFully(Self.armorSearchByteCount - prefix.count)
        }
        var source = AnyByteSource(PrefixedByteSource(prefix: prefix, inner: base))
        var armored = false
        if !RSAMessageContainer.hasMagic(prefix), RSAArmor.beginLineOffset(in: prefix[...]) != nil {
            var decoded = AnyByteSource(RSAArmorDecodingSource(source))
            prefix = try decoded.readFully(RSAMessageContainer.headerByteCount)
            source = AnyByteSource(PrefixedByteSource(prefix: prefix, inner: decoded))
            armored = true
        }
        self.armored = armored
        self.isEmpty = prefix.isEmpty
        if RSAMessageContainer.hasMagic(prefix) {
            let header = try RSAMessageContainer.Header(parsing: prefix)
            _ = try source.readFully(header.byteCount)  // consume the header
            detected = .container(header)
        } else {
            detected = .other
        }
        self.source = source
    }
}

/// A type-erased byte source, so that armor and peeking can be stacked freely.
package final class AnyByteSource: RSAByteSource {
    private let readFunction: (Int) throws -> [UInt8]
    private let remainingFunction: () -> Int?

    init<S: RSAByteSource>(_ inner: S) {
        let box = Box(inner)
        readFunction = { try box.value.read(upTo: $0) }
        remainingFunction = { box.value.remainingByteCount }
    }

    private final class Box<S> {
        var value: S
        init(_ value: S) { self.value = value }
    }

    package func read(upTo maximumCount: Int) throws -> [UInt8] { try readFunction(maximumCount) }
    package var remainingByteCount: Int? { remainingFunction() }
}

/// A source that first yields bytes already read (a peeked prefix), then the inner source.
struct PrefixedByteSource<Inner: RSAByteSource>: RSAByteSource {
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
