// Entry points for the libFuzzer harnesses in Fuzz/, behind `@_spi(Fuzzing)`.
//
// The parsers the harnesses drive are internal (the DER reader, the PEM scanner, the store's
// item-file record). Rather than making them public, this file hands out the few results a
// harness needs to check a property, as plain Swift values. Only code that writes
// `@_spi(Fuzzing) import RSAKit` sees these names; they are not part of the public API, carry
// no stability promise, and nothing in RSAKit or the CLI uses them.

/// Thin wrappers over RSAKit's internal parsers, for the fuzz harnesses only.
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
import RSAKitTLS

@_spi(Fuzzing)
public enum RSAKitFuzzing {
    // MARK: DER

    /// One element of a DER tree as the strict reader saw it.
    public struct DERNode: Sendable, Equatable {
        /// The tag octet.
        public let tag: UInt8
        /// The content octets of a primitive element (empty for a constructed one).
        public let content: [UInt8]
        /// The children of a constructed element, in order (empty for a primitive one).
        public let children: [DERNode]
        /// Whether the tag has the constructed bit.
        public var isConstructed: Bool { tag & 0x20 != 0 }
    }

    /// The deepest nesting the DER reader accepts.
    public static var derMaximumDepth: Int { DERReader.maximumDepth }

    /// Read `bytes` as exactly one DER element with ``DERReader/topLevelElement(in:name:)``
    /// (which validates every nested header) and return the tree.
    /// - Throws: whatever the reader throws (`RSAError.malformedDER`).
    public static func derTree(_ bytes: [UInt8]) throws -> DERNode {
        let reader = DERReader(bytes)
        let top = try reader.topLevelElement(in: 0..<bytes.count, name: "input")
        return try node(reader, top)
    }

    private static func node(_ reader: DERReader, _ element: DERElement) throws -> DERNode {
        guard element.isConstructed else {
            return DERNode(tag: element.tag, content: Array(reader.bytes[element.content]), children: [])
        }
        return DERNode(
            tag: element.tag, content: [],
            children: try reader.children(of: element).map { try node(reader, $0) })
    }

    /// The typed reads of a primitive element's content, as the key decoder would do them:
    /// INTEGER magnitude (nil if refused), whether a non-DER note was recorded, and the
    /// DER re-encoding of that magnitude.
    public static func derUnsignedInteger(tlv bytes: [UInt8]) throws -> (
        magnitude: [UInt8], noted: Bool, reencoded: [UInt8]
    ) {
        let reader = DERReader(bytes)
        let top = try reader.topLevelElement(in: 0..<bytes.count, name: "input")
        let magnitude = Array(try reader.unsignedInteger(top, what: "fuzz"))
        return (magnitude, !reader.notes.messages.isEmpty, DERValue.unsignedInteger(magnitude).encoded())
    }

    /// An OBJECT IDENTIFIER element's dotted form (nil if the reader refuses it).
    public static func derObjectIdentifier(tlv bytes: [UInt8]) throws -> String {
        let reader = DERReader(bytes)
        let top = try reader.topLevelElement(in: 0..<bytes.count, name: "input")
        return dottedObjectIdentifier(try reader.objectIdentifier(top, what: "fuzz"))
    }

    // MARK: PEM and base64

    /// One block found by the PEM scanner, and the result of decoding it.
    public struct PEMBlockResult: Sendable {
        /// The label between "BEGIN " and the dashes.
        public let label: String
        /// The decoded bytes, or the error the decoder threw (`RSAError.malformedPEM`).
        public let decoded: Result<[UInt8], RSAError>
        /// The RFC 1421 header lines the block carried.
        public let headerCount: Int
    }

    /// Scan `bytes` as PEM text (``PEMDocument/init(scanning:)``) and decode every block.
    public static func pemBlocks(_ bytes: [UInt8]) -> [PEMBlockResult] {
        let document = PEMDocument(scanning: bytes)
        return document.blocks.map { block in
            do {
                let (headers, der) = try document.decode(block)
                return PEMBlockResult(label: block.label, decoded: .success(der), headerCount: headers.count)
            } catch let error as RSAError {
                return PEMBlockResult(label: block.label, decoded: .failure(error), headerCount: 0)
            } catch {
                return PEMBlockResult(label: block.label, decoded: .failure(.internalError("\(error)")), headerCount: 0)
            }
        }
    }

    /// Whether the scanner's quick test finds a BEGIN line.
    public static func pemContainsBeginLine(_ bytes: [UInt8]) -> Bool {
        PEMDocument.containsBeginLine(bytes)
    }

    /// The PEM writer (``PEMDocument/encode(_:label:)``).
    public static func pemEncode(_ der: [UInt8], label: String) -> String {
        PEMDocument.encode(der, label: label)
    }

    /// The base64 decoder in front of Nettle (nil when it refuses the characters).
    public static func base64Decode(_ characters: [UInt8], strict: Bool) -> [UInt8]? {
        try? Base64.decode(characters, strict: strict)
    }

    /// The base64 encoder (Nettle).
    public static func base64Encode(_ bytes: [UInt8], padded: Bool) -> String {
        Base64.encode(bytes, padded: padded)
    }

    // MARK: Store item files

    /// The metadata record of an item file, as plain values.
    public struct StoreItem: Sendable, Equatable {
        public let format: Int
        public let itemID: String
        public let keyClass: String
        public let applicationTag: String
        public let label: String?
        public let keySizeInBits: Int
        public let fingerprint: String
        public let creationDate: String
        public let pem: String
    }

    /// Parse an item file (``StoreItemRecord/decode(_:)``).
    /// - Throws: the record's damage reason (an internal error type; any throw means "refused").
    public static func storeItemDecode(_ bytes: [UInt8]) throws -> StoreItem {
        let (m, pem) = try StoreItemRecord.decode(bytes)
        return StoreItem(
            format: m.format, itemID: m.itemID, keyClass: m.keyClass.rawValue,
            applicationTag: m.applicationTag, label: m.label, keySizeInBits: m.keySizeInBits,
            fingerprint: m.fingerprint, creationDate: m.creationDate, pem: pem)
    }

    /// Write an item file from a parsed record (``StoreItemRecord/encode(_:pem:)``).
    public static func storeItemEncode(_ item: StoreItem) throws -> [UInt8] {
        guard let keyClass = RSAKeyClass(rawValue: item.keyClass) else {
            throw RSAError.internalError("key class \(item.keyClass)")
        }
        let metadata = StoreItemMetadata.record(
            format: item.format, itemID: item.itemID, keyClass: keyClass,
            applicationTag: item.applicationTag, label: item.label,
            keySizeInBits: item.keySizeInBits, fingerprint: item.fingerprint,
            creationDate: item.creationDate)
        return try StoreItemRecord.encode(metadata, pem: item.pem)
    }

    /// The store's date parser (nil for text not exactly "YYYY-MM-DDTHH:MM:SS.mmmZ").
    public static func storeParseDate(_ text: String) -> Int64? { StoreItemRecord.parseDate(text) }

    /// The store's date formatter.
    public static func storeFormatDate(milliseconds: Int64) -> String {
        StoreItemRecord.formatDate(milliseconds: milliseconds)
    }
}

@_spi(Fuzzing)
extension RSAKitFuzzing {
    /// RSADP by plain variable-time mpz arithmetic, blinded, for FuzzContainer's reference
    /// model of container decryption (an independent path to compare RSAKit's against). Not
    /// constant-time: fuzzing only, on the harness's own keys.
    /// - Returns: m as exactly k bytes.
    /// - Throws: `RSAError.decryptionFailed` when c >= n.
    public static func rsadpReference(_ key: RSAPrivateKey, _ ciphertext: [UInt8], random: RSARandomSource) throws
        -> [UInt8]
    {
        try key.rsadpReferenceVarTime(ciphertext, random: random)
    }
}
