import XCTest
import RSAKit
@testable import RSAKitCore

/// The strict DER reader and writer, and hostile DER given to the key decoders.
/// Keys come from `RSAPrivateKey.generate` (no openssl needed).
final class DERTests: XCTestCase {
    typealias F = KeyFormatFixtures

    private func assertMalformedDER(
        _ expression: @autoclosure () throws -> Any, offset: Int? = nil,
        reasonContains: String? = nil, _ message: String = "",
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try expression(), message, file: file, line: line) { error in
            guard case let .malformedDER(reason, at)? = error as? RSAError else {
                return XCTFail("expected malformedDER, got \(error) \(message)", file: file, line: line)
            }
            if let offset { XCTAssertEqual(at, offset, "\(reason) \(message)", file: file, line: line) }
            if let reasonContains {
                XCTAssertTrue(
                    reason.contains(reasonContains), "\"\(reason)\" lacks \"\(reasonContains)\" \(message)", file: file,
                    line: line)
            }
        }
    }

    // MARK: Writer

    func testWriter_IntegersAreMinimalAndPositive() {
        XCTAssertEqual(DERValue.unsignedInteger([]).encoded(), [0x02, 0x01, 0x00])
        XCTAssertEqual(DERValue.unsignedInteger([0, 0, 0]).encoded(), [0x02, 0x01, 0x00])
        XCTAssertEqual(DERValue.unsignedInteger([0x7F]).encoded(), [0x02, 0x01, 0x7F])
        XCTAssertEqual(DERValue.unsignedInteger([0x80]).encoded(), [0x02, 0x02, 0x00, 0x80])
        XCTAssertEqual(
            DERValue.unsignedInteger([0x00, 0x00, 0x01, 0x00, 0x01]).encoded(), [0x02, 0x03, 0x01, 0x00, 0x01])
        XCTAssertEqual(DERValue.unsignedInteger([0x00, 0xFF]).encoded(), [0x02, 0x02, 0x00, 0xFF])
    }

    func testWriter_LengthsUseTheShortestForm() {
        let short = DERValue.octetStringWrapping(.unsignedInteger([UInt8](repeating: 0x11, count: 125))).encoded()
        XCTAssertEqual(Array(short.prefix(2)), [0x04, 127])
        let oneOctet = DERValue.octetStringWrapping(.unsignedInteger([UInt8](repeating: 0x11, count: 126))).encoded()
        XCTAssertEqual(Array(oneOctet.prefix(3)), [0x04, 0x81, 128])
        // INTEGER of 253 octets: 02 81 FD + 253 = 256 octets of OCTET STRING content.
        let twoOctets = DERValue.octetStringWrapping(.unsignedInteger([UInt8](repeating: 0x11, count: 253))).encoded()
        XCTAssertEqual(Array(twoOctets.prefix(4)), [0x04, 0x82, 0x01, 0x00])
        XCTAssertEqual(twoOctets.count, 4 + 256)
    }

    func testWriter_OutputReadsBackThroughTheStrictReader() throws {
        let key = F.rsakitKey
        for der in [
            key.pkcs8DERRepresentation, key.pkcs1DERRepresentation, key.publicKey.derRepresentation,
            key.publicKey.pkcs1DERRepresentation
        ] {
            let reader = DERReader(der)
            let top = try reader.topLevelElement(in: 0..<der.count, name: "key")
            XCTAssertEqual(top.end, der.count)
        }
    }

    // MARK: Reader: framing

    func testReader_RejectsEmptyInput() {
        assertMalformedDER(try RSAPublicKey(derRepresentation: []), offset: 0, reasonContains: "empty")
    }

    func testReader_RejectsIndefiniteLength() {
        let key = F.rsakitKey.publicKey.pkcs1DERRepresentation
        let inner = Array(key[3...])  // after 30 81 xx
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: [0x30, 0x80] + inner + [0, 0]),
            offset: 1, reasonContains: "indefinite length")
    }

    func testReader_RejectsNonMinimalLengths() {
        // 30 81 05: the long form for a length below 128.
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: [0x30, 0x81, 0x06] + F.integer([0x0F]) + F.integer([3])),
            offset: 1, reasonContains: "not minimally encoded")
        // 30 82 00 89: a leading zero octet in the long form (what OpenSSL 3.0 accepts).
        let key = F.rsakitKey.publicKey.pkcs1DERRepresentation
        XCTAssertEqual(Array(key.prefix(2)), [0x30, 0x81])
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: [0x30, 0x82, 0x00] + key[2...]),
            offset: 1, reasonContains: "leading zero octet")
    }

    func testReader_RejectsOverlongLengthField() {
        assertMalformedDER(
            try RSAPublicKey(
                derRepresentation: [0x30, 0x85, 0x01, 0x00, 0x00, 0x00, 0x00] + [UInt8](repeating: 0, count: 16)),
            offset: 1, reasonContains: "length field of 5 octets")
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: [0x30, 0xFF, 0x00]), offset: 1, reasonContains: "reserved")
    }

    func testReader_RejectsLengthBeyondTheBuffer() {
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0x01, 0x03]),
            offset: 1, reasonContains: "length 4294967295 exceeds the 3 bytes remaining")
        // An inner element longer than its parent.
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: [0x30, 0x03, 0x02, 0x05, 0x01]),
            offset: 3, reasonContains: "exceeds the 1 bytes remaining")
    }

    func testReader_RejectsTrailingBytes() {
        let der = F.rsakitKey.publicKey.derRepresentation
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: der + [0x00]), offset: der.count, reasonContains: "1 trailing byte")
        assertMalformedDER(try RSAPublicKey(derRepresentation: der + der), offset: der.count)
    }

    func testReader_RejectsHighTagNumberForm() {
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: [0x30, 0x04, 0x1F, 0x81, 0x01, 0x00]),
            offset: 2, reasonContains: "high-tag-number")
    }

    func testReader_RejectsTenThousandNestedSequences() {
        // Definite lengths, built from the inside out.
        var nested: [UInt8] = [0x30, 0x00]
        for _ in 0..<9_999 { nested = F.tlv(0x30, nested) }
        assertMalformedDER(try RSAPublicKey(derRepresentation: nested), reasonContains: "nested more than 32 deep")
        assertMalformedDER(try RSAKeyFile(bytes: nested), reasonContains: "nested more than 32 deep")
        // Indefinite lengths: refused at the first length octet.
        let indefinite = [UInt8](repeating: 0, count: 20_000).enumerated().map {
            $0.offset % 2 == 0 ? UInt8(0x30) : UInt8(0x80)
        }
        assertMalformedDER(try RSAPrivateKey(derRepresentation: indefinite), offset: 1, reasonContains: "indefinite")
    }

    func testReader_DepthLimitAllowsRealStructures() throws {
        // 32 levels are accepted by the framing check (the key schema then rejects the shape).
        var nested: [UInt8] = [0x30, 0x00]
        for _ in 0..<31 { nested = F.tlv(0x30, nested) }
        XCTAssertNoThrow(try DERReader(nested).topLevelElement(in: 0..<nested.count, name: "test"))
        nested = F.tlv(0x30, nested)
        XCTAssertThrowsError(try DERReader(nested).topLevelElement(in: 0..<nested.count, name: "test"))
    }

    // MARK: Reader: every truncation of a valid key

    func testDecode_TruncatedAtEveryOffset_IsACleanError() {
        let key = F.rsakitKey
        let encodings: [(String, [UInt8], ([UInt8]) throws -> Any)] = [
            ("PKCS#8", key.pkcs8DERRepresentation, { try RSAPrivateKey(derRepresentation: $0) }),
            ("PKCS#1 private", key.pkcs1DERRepresentation, { try RSAPrivateKey(derRepresentation: $0) }),
            ("SPKI", key.publicKey.derRepresentation, { try RSAPublicKey(derRepresentation: $0) }),
            ("PKCS#1 public", key.publicKey.pkcs1DERRepresentation, { try RSAPublicKey(derRepresentation: $0) })
        ]
        for (name, der, decode) in encodings {
            XCTAssertNoThrow(try decode(der), name)
            for length in 0..<der.count {
                let truncated = Array(der.prefix(length))
                assertMalformedDER(try decode(truncated), "\(name) truncated to \(length) bytes")
                if length > 1 {  // A lone "0" (0x30) is text as much as DER.
                    assertMalformedDER(
                        try RSAKeyFile(bytes: truncated), "\(name) truncated to \(length) bytes (RSAKeyFile)")
                }
            }
        }
    }

    /// Each single-byte change of a valid key is a key or an RSAError: never a crash or a hang.
    func testDecode_EverySingleByteMutation_IsAKeyOrAnRSAError() {
        let der = F.rsakitKey.pkcs8DERRepresentation
        var generator = SplitMix64(seed: 0x5253_414B_4954)  // "RSAKIT"
        var accepted = 0
        for index in der.indices {
            for _ in 0..<2 {
                var mutated = der
                mutated[index] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
                do {
                    _ = try RSAKeyFile(bytes: mutated)
                    accepted += 1
                } catch is RSAError {
                } catch {
                    XCTFail("byte \(index): unexpected error type \(error)")
                }
            }
        }
        // Changing any bit of a validated private key breaks a relation or the framing,
        // except in a few places (for example the first byte of a wrapping length).
        XCTAssertLessThan(accepted, 8, "too many mutations accepted")
    }

    // MARK: Reader: INTEGER contents

    func testDecode_NegativeModulus_IsRejected() {
        let key = F.rsakitKey.publicKey
        // The modulus without its 0x00 sign octet reads as a negative INTEGER.
        let der = F.sequence(F.rawInteger(key.modulus), F.integer(key.publicExponent))
        assertMalformedDER(try RSAPublicKey(derRepresentation: der), offset: 6, reasonContains: "modulus) is negative")
    }

    func testDecode_ZeroExponent_IsRejected() {
        let der = F.sequence(F.integer(F.rsakitKey.modulus), F.rawInteger([0x00]))
        XCTAssertThrowsError(try RSAPublicKey(derRepresentation: der)) { error in
            XCTAssertEqual(error as? RSAError, .invalidKey(.publicExponentTooSmall))
        }
    }

    func testDecode_EmptyInteger_IsRejected() {
        let der = F.sequence(F.integer(F.rsakitKey.modulus), [0x02, 0x00])
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: der), reasonContains: "INTEGER (publicExponent) has no content octets")
    }

    func testDecode_ModulusWithRedundantLeadingZeros_IsTheSameKey() throws {
        let key = F.rsakitKey.publicKey
        for padding in 1...3 {
            let der = F.sequence(
                F.rawInteger([UInt8](repeating: 0, count: padding) + key.modulus), F.integer(key.publicExponent))
            let read = try RSAPublicKey(derRepresentation: der)
            XCTAssertEqual(read, key)
            XCTAssertEqual(read.modulusByteCount, 128, "k comes from the bit length, not the encoding")
            XCTAssertEqual(read.pkcs1DERRepresentation, key.pkcs1DERRepresentation, "written back minimal")
            // The modulus's top bit is set, so one 0x00 is the sign octet; more are redundant.
            XCTAssertGreaterThanOrEqual(key.modulus[0], 0x80)
            XCTAssertEqual(
                try RSAKeyFile(bytes: der).warnings,
                padding == 1
                    ? []
                    : [
                        "INTEGER (modulus) at byte offset 3 has redundant leading zero octets (not DER); read as its "
                            + "value"
                    ])
        }
        // The one 0x00 octet a positive INTEGER needs is not redundant.
        XCTAssertEqual(try RSAKeyFile(bytes: key.pkcs1DERRepresentation).warnings, [])
    }

    func testDecode_KFromBitLength_For2047BitModulus() throws {
        // A 2047-bit modulus: 256 octets, top octet < 0x80, so no sign octet is written.
        let key =
            F.openSSLPath != nil
            ? try RSAPrivateKey(pemRepresentation: F.generatedKey(bits: 2047, exponent: 65537).pem)
            : try RSAPrivateKey.generate(bitCount: 2047)
        XCTAssertEqual(key.modulusBitCount, 2047)
        let der = key.publicKey.pkcs1DERRepresentation
        XCTAssertEqual(Array(der[4..<8]), [0x02, 0x82, 0x01, 0x00], "modulus INTEGER of exactly 256 octets")
        XCTAssertLessThan(der[8], 0x80)
        let read = try RSAPublicKey(derRepresentation: der)
        XCTAssertEqual(read.modulusBitCount, 2047)
        XCTAssertEqual(read.modulusByteCount, 256)
        XCTAssertEqual(read.maximumMessageByteCount, 245)
    }

    // MARK: Reader: the other types

    func testDecode_SPKIWithUnusedBitsInTheBitString_IsRejected() {
        let key = F.rsakitKey.publicKey
        let der = F.sequence(F.rsaEncryptionAlgorithm, F.tlv(0x03, [0x01] + key.pkcs1DERRepresentation))
        assertMalformedDER(try RSAPublicKey(derRepresentation: der), reasonContains: "1 unused bits")
    }

    func testDecode_NullParametersWithContent_AreRejected() {
        let key = F.rsakitKey.publicKey
        let algorithm = F.sequence(F.tlv(0x06, KnownOID.rsaEncryption), [0x05, 0x01, 0x00])
        let der = F.sequence(algorithm, F.tlv(0x03, [0x00] + key.pkcs1DERRepresentation))
        assertMalformedDER(try RSAPublicKey(derRepresentation: der), reasonContains: "NULL (rsaEncryption parameters)")
    }

    func testDecode_AbsentAlgorithmParameters_AreAccepted() throws {
        // OpenSSL reads rsaEncryption without the NULL; so does rsakit.
        let key = F.rsakitKey.publicKey
        let der = F.sequence(
            F.sequence(F.tlv(0x06, KnownOID.rsaEncryption)), F.tlv(0x03, [0x00] + key.pkcs1DERRepresentation))
        XCTAssertEqual(try RSAPublicKey(derRepresentation: der), key)
        XCTAssertEqual(
            try RSAKeyFile(bytes: der).warnings,
            [
                "the rsaEncryption AlgorithmIdentifier at byte offset 3 has no NULL parameters (RFC 3279 requires "
                    + "them); read anyway"
            ])
    }

    func testDecode_MalformedObjectIdentifier_IsRejected() {
        let key = F.rsakitKey.publicKey
        let bit = F.tlv(0x03, [0x00] + key.pkcs1DERRepresentation)
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: F.sequence(F.sequence(F.tlv(0x06, [0x2A, 0x86])), bit)),
            reasonContains: "ends inside a subidentifier")
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: F.sequence(F.sequence(F.tlv(0x06, [0x2A, 0x80, 0x01])), bit)),
            reasonContains: "leading 0x80")
    }

    func testDecode_OtherAlgorithm_IsNamed() {
        let key = F.rsakitKey.publicKey
        let ecAlgorithm = F.sequence(
            F.tlv(0x06, [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]),
            F.tlv(0x06, [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]))
        let der = F.sequence(ecAlgorithm, F.tlv(0x03, [0x00, 0x04, 0x01, 0x02]))
        XCTAssertThrowsError(try RSAPublicKey(derRepresentation: der)) { error in
            XCTAssertEqual(
                error as? RSAError,
                .unsupportedKeyFormat(reason: "not an RSA key: an elliptic-curve key (id-ecPublicKey)"))
        }
        let unknown = F.sequence(
            F.sequence(F.tlv(0x06, [0x2B, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x01])),
            F.tlv(0x03, [0x00] + key.pkcs1DERRepresentation))
        XCTAssertThrowsError(try RSAPublicKey(derRepresentation: unknown)) { error in
            XCTAssertEqual(
                error as? RSAError, .unsupportedKeyFormat(reason: "not an RSA key: algorithm OID 1.3.6.1.4.1.311.1"))
        }
    }

    func testDecode_UnrecognisedShape_SaysWhatItFound() {
        XCTAssertThrowsError(try RSAKeyFile(bytes: F.sequence(F.integer([1]), [0x05, 0x00]))) { error in
            guard case let .malformedKey(reason)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("SEQUENCE { INTEGER, NULL }"), reason)
        }
        assertMalformedDER(
            try RSAPublicKey(derRepresentation: F.tlv(0x31, F.integer([1]))), offset: 0,
            reasonContains: "expected a SEQUENCE")
        XCTAssertThrowsError(try RSAKeyFile(bytes: F.tlv(0x31, F.integer([1])))) { error in
            XCTAssertEqual(
                error as? RSAError,
                .malformedKey(
                    reason: "input is neither PEM (no \"-----BEGIN\" line) nor DER (starts with 0x31, not a SEQUENCE)"))
        }
        XCTAssertThrowsError(try RSAKeyFile(bytes: [])) { error in
            XCTAssertEqual(error as? RSAError, .malformedKey(reason: "the input is empty"))
        }
    }

    func testErrorDescription_NamesReasonAndOffset() {
        XCTAssertEqual(
            RSAError.malformedDER(reason: "indefinite length (0x80) is BER, not DER", offset: 1).description,
            "malformed DER at byte offset 1: indefinite length (0x80) is BER, not DER")
    }

    func testDottedObjectIdentifier() {
        XCTAssertEqual(dottedObjectIdentifier(ArraySlice(KnownOID.rsaEncryption)), "1.2.840.113549.1.1.1")
        XCTAssertEqual(dottedObjectIdentifier(ArraySlice([0x2B, 0x65, 0x70])), "1.3.101.112")
        XCTAssertEqual(dottedObjectIdentifier(ArraySlice([0x88, 0x37, 0x03])), "2.999.3")
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a deterministic generator for test mutations only.
fileprivate struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
