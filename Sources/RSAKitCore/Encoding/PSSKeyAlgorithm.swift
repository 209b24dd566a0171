// The id-RSASSA-PSS AlgorithmIdentifier of a key, read and written (RFC 4055 §3.1, RFC 8017
// Appendix A.2.3):
//
//   AlgorithmIdentifier ::= SEQUENCE { algorithm id-RSASSA-PSS, parameters RSASSA-PSS-params OPTIONAL }
//   RSASSA-PSS-params ::= SEQUENCE {
//       hashAlgorithm      [0] HashAlgorithm      DEFAULT sha1,
//       maskGenAlgorithm   [1] MaskGenAlgorithm   DEFAULT mgf1SHA1,
//       saltLength         [2] INTEGER            DEFAULT 20,
//       trailerField       [3] TrailerField       DEFAULT trailerFieldBC (1) }
//   HashAlgorithm    ::= AlgorithmIdentifier { hash OID, NULL or absent }
//   MaskGenAlgorithm ::= AlgorithmIdentifier { id-mgf1 (1.2.840.113549.1.1.8), HashAlgorithm }
//
// Absent parameters leave the key free to use any PSS parameters; present ones restrict it.

internal enum PSSKeyAlgorithm {
    /// id-mgf1, 1.2.840.113549.1.1.8.
    static let mgf1: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x08]
    /// The longest salt length read, in bytes (far above any modulus: emLen - hLen - 2 < 2048).
    static let maximumSaltLength = 1 << 16

    /// The restriction of the id-RSASSA-PSS AlgorithmIdentifier `element`, whose algorithm
    /// OID has been read already; `fields` are its elements.
    ///
    /// DEFAULT values written out (not DER) and NULL parameters are read, with a note; such a
    /// key keeps the DER encoding of what was read (`encode(_:)`), not the bytes, so that it
    /// exports as DER and reloads without a note. A DER identifier is kept byte for byte.
    /// - Throws: `RSAError.malformedDER` for a structure that is not RSASSA-PSS-params;
    ///   `RSAError.unsupportedKeyFormat` for a hash or mask generation function RSAKit lacks,
    ///   or a trailer field other than 1.
    static func decode(_ reader: DERReader, _ element: DERElement, fields: [DERElement]) throws -> RSAPSSKeyRestriction
    {
        let der = Array(reader.bytes[element.offset..<element.end])
        guard fields.count == 2 else {
            return RSAPSSKeyRestriction(parameters: nil, algorithmIdentifierDER: der)
        }
        if fields[1].tag == DERTag.null {
            reader.notes.add(
                "the id-RSASSA-PSS AlgorithmIdentifier at byte offset \(element.offset) has NULL parameters (RFC "
                    + "4055 says absent); read as a key without parameters"
            )
            return RSAPSSKeyRestriction(parameters: nil, algorithmIdentifierDER: encode(nil))
        }
        let parts = try reader.sequence(fields[1], what: "RSASSA-PSS-params")
        var hash = RSAHashAlgorithm.sha1, mgf1Hash = RSAHashAlgorithm.sha1, saltLength = 20
        var nextNumber = 0
        var wroteDefault = false
        func noteDefault(_ part: DERElement, _ what: String) {
            Self.noteDefault(reader, part, what)
            wroteDefault = true
        }
        for part in parts {
            let number = part.tag & 0x1F
            guard part.tag & 0xE0 == 0xA0, number <= 3, Int(number) >= nextNumber else {
                throw RSAError.malformedDER(
                    reason:
                        "unexpected \(part.tagName) in RSASSA-PSS-params (expected [0] to [3], in order, each once)",
                    offset: part.offset)
            }
            nextNumber = Int(number) + 1
            let inner = try reader.children(of: part)
            guard inner.count == 1 else {
                throw RSAError.malformedDER(
                    reason: "RSASSA-PSS-params [\(number)] holds \(inner.count) elements; expected 1",
                    offset: part.offset)
            }
            let value = inner[0]
            switch number {
            case 0:
                hash = try readHash(reader, value, what: "hashAlgorithm")
                if hash == .sha1 { noteDefault(part, "hashAlgorithm SHA-1") }
            case 1:
                let mgf = try reader.sequence(value, what: "maskGenAlgorithm")
                guard mgf.count == 2 else {
                    throw RSAError.malformedDER(
                        reason: "maskGenAlgorithm has \(mgf.count) fields; expected 2 (id-mgf1 and its hash)",
                        offset: value.offset)
                }
                let oid = try reader.objectIdentifier(mgf[0], what: "maskGenAlgorithm")
                guard oid.elementsEqual(mgf1) else {
                    throw RSAError.unsupportedKeyFormat(
                        reason:
                            "the key's RSASSA-PSS mask generation function \(dottedObjectIdentifier(oid)) is not "
                            + "MGF1 (1.2.840.113549.1.1.8)"
                    )
                }
                mgf1Hash = try readHash(reader, mgf[1], what: "MGF1 hash")
                if mgf1Hash == .sha1 { noteDefault(part, "maskGenAlgorithm MGF1-SHA-1") }
            case 2:
                saltLength = try reader.smallInteger(value, what: "saltLength")
                guard (0...maximumSaltLength).contains(saltLength) else {
                    throw RSAError.malformedDER(
                        reason: "RSASSA-PSS saltLength \(saltLength) is out of range", offset: value.offset)
                }
                if saltLength == 20 { noteDefault(part, "saltLength 20") }
            default:
                let trailer = try reader.smallInteger(value, what: "trailerField")
                guard trailer == 1 else {
                    throw RSAError.unsupportedKeyFormat(
                        reason: "the key's RSASSA-PSS trailerField is \(trailer); only 1 (0xBC, RFC 8017 §9.1.1) exists"
                    )
                }
                noteDefault(part, "trailerField 1")
            }
        }
        let parameters = try RSAPSSParameters(hash: hash, mgf1Hash: mgf1Hash, saltLength: saltLength)
        return RSAPSSKeyRestriction(
            parameters: parameters, algorithmIdentifierDER: wroteDefault ? encode(parameters) : der)
    }

    /// A HashAlgorithm: a known hash OID with NULL or absent parameters (RFC 4055 §2.1:
    /// implementations must accept both).
    private static func readHash(_ reader: DERReader, _ element: DERElement, what: String) throws -> RSAHashAlgorithm {
        let fields = try reader.sequence(element, what: what)
        guard let first = fields.first, fields.count <= 2 else {
            throw RSAError.malformedDER(
                reason: "\(what) has \(fields.count) fields; expected 1 or 2", offset: element.offset)
        }
        if fields.count == 2 { try reader.null(fields[1], what: "\(what) parameters") }
        let oid = try reader.objectIdentifier(first, what: what)
        guard let hash = RSAHashAlgorithm(objectIdentifier: oid) else {
            throw RSAError.unsupportedKeyFormat(
                reason: "the key's RSASSA-PSS \(what) \(dottedObjectIdentifier(oid)) is not a hash RSAKit has")
        }
        return hash
    }

    private static func noteDefault(_ reader: DERReader, _ element: DERElement, _ what: String) {
        reader.notes.add(
            "the RSASSA-PSS parameters at byte offset \(element.offset) write out the DEFAULT \(what) (DER leaves it "
                + "out); read anyway"
        )
    }

    /// The DER AlgorithmIdentifier for `parameters` (nil: no parameters), DEFAULT values
    /// left out, hashes with NULL parameters, as OpenSSL writes them.
    static func encode(_ parameters: RSAPSSParameters?) -> [UInt8] {
        guard let parameters else {
            return DERValue.sequence([.objectIdentifier(KnownOID.rsassaPSS)]).encoded()
        }
        func hashAlgorithm(_ hash: RSAHashAlgorithm) -> DERValue {
            .sequence([.objectIdentifier(hash.objectIdentifier), .null])
        }
        var fields: [DERValue] = []
        if parameters.hash != .sha1 {
            fields.append(.explicit(0, hashAlgorithm(parameters.hash)))
        }
        if parameters.mgf1Hash != .sha1 {
            fields.append(.explicit(1, .sequence([.objectIdentifier(mgf1), hashAlgorithm(parameters.mgf1Hash)])))
        }
        if parameters.saltLength != 20 {
            fields.append(.explicit(2, .unsignedInteger(saltLengthOctets(parameters.saltLength))))
        }
        return DERValue.sequence([.objectIdentifier(KnownOID.rsassaPSS), .sequence(fields)]).encoded()
    }

    private static func saltLengthOctets(_ n: Int) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8),
            UInt8(truncatingIfNeeded: n)
        ]
    }
}
