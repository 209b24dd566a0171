// A small, strict DER reader and writer (ITU-T X.690 §8 and §10) for the handful of
// types RSA key structures use: SEQUENCE, INTEGER, NULL, OBJECT IDENTIFIER, BIT STRING,
// OCTET STRING and context-specific tags.
//
// Reading is strict DER: definite lengths only, lengths in the shortest form, no high
// tag numbers, every element inside its parent, no bytes after the outer element,
// nesting at most `DERReader.maximumDepth` deep. Nothing is allocated from a length
// read from the input, and the walk over nested elements is iterative, so hostile input
// can neither exhaust memory nor the stack. Every rejection is
// `RSAError.malformedDER(reason:offset:)` with the byte offset of the offending octet.

/// Universal and context-specific tag octets used by RSA key structures (X.690 §8.1.2).
package enum DERTag {
    package static let integer: UInt8 = 0x02
    package static let bitString: UInt8 = 0x03
    package static let octetString: UInt8 = 0x04
    static let null: UInt8 = 0x05
    package static let objectIdentifier: UInt8 = 0x06
    package static let sequence: UInt8 = 0x30
    package static let set: UInt8 = 0x31

    /// `[number]` in the context-specific class, constructed or primitive.
    package static func contextSpecific(_ number: UInt8, constructed: Bool) -> UInt8 {
        0x80 | (constructed ? 0x20 : 0x00) | number
    }

    /// A readable name for error messages ("INTEGER", "[0] constructed", "tag 0x13").
    static func name(_ tag: UInt8) -> String {
        switch tag {
        case integer: return "INTEGER"
        case bitString: return "BIT STRING"
        case octetString: return "OCTET STRING"
        case null: return "NULL"
        case objectIdentifier: return "OBJECT IDENTIFIER"
        case sequence: return "SEQUENCE"
        case set: return "SET"
        case 0x01: return "BOOLEAN"
        case 0x23: return "constructed BIT STRING (BER, not DER)"
        case 0x24: return "constructed OCTET STRING (BER, not DER)"
        case 0x10: return "primitive SEQUENCE (invalid)"
        default:
            if tag & 0xC0 == 0x80 {
                return "[\(tag & 0x1F)]" + (tag & 0x20 != 0 ? " constructed" : " primitive")
            }
            return "tag 0x" + hexByte(tag)
        }
    }
}

/// Two lower-case hex digits.
package func hexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}

/// The value 0-15 of an ASCII hex digit (either case), or nil.
internal func hexDigitValue(_ character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
    default: return nil
    }
}

/// One decoded tag-length-value header. Offsets are absolute indices into the reader's input.
package struct DERElement {
    /// The tag octet.
    package let tag: UInt8
    /// Offset of the tag octet.
    package let offset: Int
    /// The content octets' offsets.
    package let content: Range<Int>

    /// Offset just past the element.
    package var end: Int { content.upperBound }
    /// Whether the tag has the constructed bit (X.690 §8.1.2.5).
    package var isConstructed: Bool { tag & 0x20 != 0 }
    /// The readable tag name.
    package var tagName: String { DERTag.name(tag) }
}

/// A strict DER reader over one byte array. Value type; never copies the input.
package struct DERReader {
    /// The deepest nesting of constructed elements accepted. RSA keys need 3 (PKCS#8 wraps
    /// PKCS#1 in an OCTET STRING, which is read as a fresh top level); certificates about 8.
    package static let maximumDepth = 32
    /// The longest length field accepted, in octets after the first (2^32 - 1 bytes).
    static let maximumLengthOctets = 4

    package let bytes: [UInt8]
    /// Deviations from DER that were accepted (shared by copies of this reader).
    package let notes = DecodingNotes()

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    private func fail(_ reason: String, at offset: Int) -> RSAError {
        RSAError.malformedDER(reason: reason, offset: offset)
    }

    /// Read the tag and length of the element at `offset`, which must end by `limit`.
    ///
    /// Checks (X.690 §10.1): low tag number form only; definite length; short form for
    /// lengths below 128; long form without leading zero octets; the content inside `limit`.
    package func element(at offset: Int, limit: Int) throws -> DERElement {
        guard offset < limit else {
            throw fail("unexpected end of data: expected a tag octet", at: offset)
        }
        let tag = bytes[offset]
        guard tag & 0x1F != 0x1F else {
            throw fail("high-tag-number form (tag octet 0x\(hexByte(tag))) is not used in RSA keys", at: offset)
        }
        let lengthOffset = offset + 1
        guard lengthOffset < limit else {
            throw fail("unexpected end of data: \(DERTag.name(tag)) has no length octet", at: lengthOffset)
        }
        let first = bytes[lengthOffset]
        var length = 0
        var contentStart = lengthOffset + 1
        if first < 0x80 {
            length = Int(first)
        } else if first == 0x80 {
            throw fail("indefinite length (0x80) is BER, not DER", at: lengthOffset)
        } else if first == 0xFF {
            throw fail("length octet 0xff is reserved (X.690 §8.1.3.5)", at: lengthOffset)
        } else {
            let count = Int(first & 0x7F)
            guard count <= DERReader.maximumLengthOctets else {
                throw fail(
                    "length field of \(count) octets is longer than any key needs (at most "
                        + "\(DERReader.maximumLengthOctets))",
                    at: lengthOffset)
            }
            guard lengthOffset + count < limit else {
                throw fail("unexpected end of data inside a \(count)-octet length field", at: lengthOffset)
            }
            guard bytes[lengthOffset + 1] != 0 else {
                throw fail("length is not minimally encoded (leading zero octet in the long form)", at: lengthOffset)
            }
            for i in 1...count {
                length = (length << 8) | Int(bytes[lengthOffset + i])
            }
            guard length >= 0x80 else {
                throw fail(
                    "length \(length) is not minimally encoded (long form used for a length below 128)",
                    at: lengthOffset)
            }
            contentStart = lengthOffset + 1 + count
        }
        let remaining = limit - contentStart
        guard length <= remaining else {
            throw fail(
                "\(DERTag.name(tag)) length \(length) exceeds the \(remaining) bytes remaining", at: lengthOffset)
        }
        return DERElement(tag: tag, offset: offset, content: contentStart..<(contentStart + length))
    }

    /// The single element spanning exactly `range`, after checking that everything nested
    /// inside it is well-formed DER no deeper than ``maximumDepth``.
    ///
    /// - Throws: `RSAError.malformedDER` for an empty range, trailing bytes after the
    ///   element, or any error of ``element(at:limit:)`` anywhere inside it.
    package func topLevelElement(in range: Range<Int>, name: String) throws -> DERElement {
        guard !range.isEmpty else {
            throw fail("\(name) is empty", at: range.lowerBound)
        }
        let top = try element(at: range.lowerBound, limit: range.upperBound)
        guard top.end == range.upperBound else {
            let extra = range.upperBound - top.end
            throw fail(
                "\(extra) trailing byte\(extra == 1 ? "" : "s") after the outer \(top.tagName) of the \(name)",
                at: top.end)
        }
        try validateNesting(of: top)
        return top
    }

    /// Walk every constructed element inside `top` (iteratively, with an explicit stack),
    /// checking each header and the nesting depth.
    private func validateNesting(of top: DERElement) throws {
        guard top.isConstructed else { return }
        var ends: [Int] = [top.end]
        var offset = top.content.lowerBound
        while let currentEnd = ends.last {
            if offset == currentEnd {
                ends.removeLast()
                continue
            }
            let child = try element(at: offset, limit: currentEnd)
            if child.isConstructed {
                guard ends.count < DERReader.maximumDepth else {
                    throw fail("elements nested more than \(DERReader.maximumDepth) deep", at: child.offset)
                }
                ends.append(child.end)
                offset = child.content.lowerBound
            } else {
                offset = child.end
            }
        }
    }

    /// The elements directly inside the constructed element `parent`, in order.
    package func children(of parent: DERElement) throws -> [DERElement] {
        guard parent.isConstructed else {
            throw fail("expected a constructed element, found \(parent.tagName)", at: parent.offset)
        }
        var result: [DERElement] = []
        var offset = parent.content.lowerBound
        while offset < parent.end {
            let child = try element(at: offset, limit: parent.end)
            result.append(child)
            offset = child.end
        }
        return result
    }

    /// Require `element` to carry `tag`.
    func expect(_ element: DERElement, tag: UInt8, what: String) throws {
        guard element.tag == tag else {
            throw fail("expected \(DERTag.name(tag)) (\(what)), found \(element.tagName)", at: element.offset)
        }
    }

    /// The children of a SEQUENCE, checked to be a SEQUENCE.
    package func sequence(_ element: DERElement, what: String) throws -> [DERElement] {
        try expect(element, tag: DERTag.sequence, what: what)
        return try children(of: element)
    }

    /// A non-negative INTEGER's magnitude: its content octets without leading zero octets.
    ///
    /// X.690 §8.3: the content is non-empty two's complement; a set top bit means
    /// negative, which no RSA key component may be. DER also wants the shortest form, but
    /// redundant leading 0x00 octets are accepted here and dropped (normalised): OpenSSL
    /// reads such keys, some encoders write them, and the value is unambiguous. Writing
    /// (``DERValue/unsignedInteger(_:)``) is always minimal.
    /// - Returns: big-endian magnitude octets (empty for 0), a slice of the input.
    package func unsignedInteger(_ element: DERElement, what: String) throws -> ArraySlice<UInt8> {
        try expect(element, tag: DERTag.integer, what: what)
        let content = element.content
        guard let first = content.first else {
            throw fail("INTEGER (\(what)) has no content octets", at: element.offset)
        }
        guard bytes[first] & 0x80 == 0 else {
            throw fail("INTEGER (\(what)) is negative (top bit of its first octet is set)", at: first)
        }
        var start = first
        while start < content.upperBound && bytes[start] == 0 { start += 1 }
        if start - first > 1 || (start - first == 1 && start < content.upperBound && bytes[start] & 0x80 == 0) {
            notes.add(
                "INTEGER (\(what)) at byte offset \(element.offset) has redundant leading zero octets (not DER); "
                    + "read as its value"
            )
        }
        return bytes[start..<content.upperBound]
    }

    /// A small non-negative INTEGER (a version number), at most 2^31 - 1.
    func smallInteger(_ element: DERElement, what: String) throws -> Int {
        let magnitude = try unsignedInteger(element, what: what)
        guard magnitude.count <= 4 else {
            throw fail("INTEGER (\(what)) is too large", at: element.offset)
        }
        return magnitude.reduce(0) { ($0 << 8) | Int($1) }
    }

    /// NULL with empty content (X.690 §8.8).
    func null(_ element: DERElement, what: String) throws {
        try expect(element, tag: DERTag.null, what: what)
        guard element.content.isEmpty else {
            throw fail(
                "NULL (\(what)) has \(element.content.count) content octets; it must have none", at: element.offset)
        }
    }

    /// An OBJECT IDENTIFIER's content octets, checked for DER form (X.690 §8.19): non-empty,
    /// the last octet ends a subidentifier, no subidentifier starts with 0x80.
    package func objectIdentifier(_ element: DERElement, what: String) throws -> ArraySlice<UInt8> {
        try expect(element, tag: DERTag.objectIdentifier, what: what)
        let content = bytes[element.content]
        guard let last = content.last else {
            throw fail("OBJECT IDENTIFIER (\(what)) is empty", at: element.offset)
        }
        guard last & 0x80 == 0 else {
            throw fail("OBJECT IDENTIFIER (\(what)) ends inside a subidentifier", at: element.content.upperBound - 1)
        }
        var atStart = true
        for index in content.indices {
            if atStart && bytes[index] == 0x80 {
                throw fail("OBJECT IDENTIFIER (\(what)) has a subidentifier with a leading 0x80 octet", at: index)
            }
            atStart = bytes[index] & 0x80 == 0
        }
        return content
    }

    /// A BIT STRING holding whole octets (unused-bits octet 0, X.690 §8.6.2): the range of
    /// the octets after the unused-bits octet.
    func octetAlignedBitString(_ element: DERElement, what: String) throws -> Range<Int> {
        try expect(element, tag: DERTag.bitString, what: what)
        guard let first = element.content.first else {
            throw fail("BIT STRING (\(what)) has no unused-bits octet", at: element.offset)
        }
        guard bytes[first] == 0 else {
            throw fail("BIT STRING (\(what)) has \(bytes[first]) unused bits; it must hold whole octets", at: first)
        }
        return (first + 1)..<element.end
    }

    /// An OCTET STRING's content range (primitive form only, as DER requires).
    func octetString(_ element: DERElement, what: String) throws -> Range<Int> {
        try expect(element, tag: DERTag.octetString, what: what)
        return element.content
    }
}

/// Accepted deviations from strict DER, collected while reading (for warnings).
package final class DecodingNotes {
    package private(set) var messages: [String] = []
    func add(_ message: String) { messages.append(message) }
}

/// Dotted-decimal form of an OBJECT IDENTIFIER's content octets (X.690 §8.19.4), for messages.
package func dottedObjectIdentifier(_ content: ArraySlice<UInt8>) -> String {
    var arcs: [String] = []
    var value: UInt64 = 0
    var first = true
    for byte in content {
        guard value <= (UInt64.max >> 7) else { return "(very long OBJECT IDENTIFIER)" }
        value = (value << 7) | UInt64(byte & 0x7F)
        if byte & 0x80 == 0 {
            if first {
                let top: UInt64 = value < 40 ? 0 : (value < 80 ? 1 : 2)
                arcs.append(String(top))
                arcs.append(String(value - top * 40))
                first = false
            } else {
                arcs.append(String(value))
            }
            value = 0
        }
    }
    return arcs.joined(separator: ".")
}

/// A DER value to be written. Built as a tree, measured, then written in one pass into an
/// array of exactly the right capacity (so secret content is never left behind in a
/// buffer that grew and was freed).
package indirect enum DERValue: Sendable {
    /// SEQUENCE of the given elements.
    case sequence([DERValue])
    /// INTEGER from non-negative big-endian magnitude octets (leading zeros ignored);
    /// written minimally, with a 0x00 sign octet only when the top bit is set.
    case unsignedInteger([UInt8])
    /// NULL.
    case null
    /// OBJECT IDENTIFIER from its content octets.
    case objectIdentifier([UInt8])
    /// BIT STRING with 0 unused bits whose octets are the DER encoding of the value.
    case bitStringWrapping(DERValue)
    /// OCTET STRING whose octets are the DER encoding of the value.
    case octetStringWrapping(DERValue)
    /// [number] EXPLICIT: a constructed context-specific element around the value (X.690 §8.14).
    case explicit(UInt8, DERValue)
    /// One complete element already encoded (tag, length and content), written unchanged:
    /// an AlgorithmIdentifier kept as it was read.
    case encoded([UInt8])

    /// The number of octets of the full TLV encoding.
    var encodedByteCount: Int {
        if case let .encoded(bytes) = self { return bytes.count }
        let content = contentByteCount
        return 1 + DERValue.lengthFieldByteCount(content) + content
    }

    private var contentByteCount: Int {
        switch self {
        case let .sequence(elements):
            return elements.reduce(0) { $0 + $1.encodedByteCount }
        case let .unsignedInteger(magnitude):
            let significant = DERValue.significantRange(magnitude)
            if significant.isEmpty { return 1 }
            return significant.count + (magnitude[significant.lowerBound] & 0x80 != 0 ? 1 : 0)
        case .null:
            return 0
        case let .objectIdentifier(content):
            return content.count
        case let .bitStringWrapping(inner):
            return 1 + inner.encodedByteCount
        case let .octetStringWrapping(inner):
            return inner.encodedByteCount
        case let .explicit(_, inner):
            return inner.encodedByteCount
        case let .encoded(bytes):
            return bytes.count
        }
    }

    private var tag: UInt8 {
        switch self {
        case .sequence: return DERTag.sequence
        case .unsignedInteger: return DERTag.integer
        case .null: return DERTag.null
        case .objectIdentifier: return DERTag.objectIdentifier
        case .bitStringWrapping: return DERTag.bitString
        case .octetStringWrapping: return DERTag.octetString
        case let .explicit(number, _): return DERTag.contextSpecific(number, constructed: true)
        case let .encoded(bytes): return bytes.first ?? 0
        }
    }

    private static func significantRange(_ magnitude: [UInt8]) -> Range<Int> {
        let start = magnitude.firstIndex(where: { $0 != 0 }) ?? magnitude.endIndex
        return start..<magnitude.endIndex
    }

    private static func lengthFieldByteCount(_ length: Int) -> Int {
        if length < 0x80 { return 1 }
        var octets = 0
        var rest = length
        while rest > 0 { octets += 1; rest >>= 8 }
        return 1 + octets
    }

    /// The DER encoding, exactly ``encodedByteCount`` octets.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(encodedByteCount)
        write(into: &out)
        return out
    }

    private func write(into out: inout [UInt8]) {
        if case let .encoded(bytes) = self {
            out.append(contentsOf: bytes)
            return
        }
        out.append(tag)
        let length = contentByteCount
        if length < 0x80 {
            out.append(UInt8(length))
        } else {
            let octets = DERValue.lengthFieldByteCount(length) - 1
            out.append(0x80 | UInt8(octets))
            for shift in stride(from: (octets - 1) * 8, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: length >> shift))
            }
        }
        switch self {
        case let .sequence(elements):
            for element in elements { element.write(into: &out) }
        case let .unsignedInteger(magnitude):
            let significant = DERValue.significantRange(magnitude)
            if significant.isEmpty {
                out.append(0)
            } else {
                if magnitude[significant.lowerBound] & 0x80 != 0 { out.append(0) }
                out.append(contentsOf: magnitude[significant])
            }
        case .null:
            break
        case let .objectIdentifier(content):
            out.append(contentsOf: content)
        case let .bitStringWrapping(inner):
            out.append(0)
            inner.write(into: &out)
        case let .octetStringWrapping(inner):
            inner.write(into: &out)
        case let .explicit(_, inner):
            inner.write(into: &out)
        case .encoded:
            break  // written whole above
        }
    }
}
