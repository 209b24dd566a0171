import XCTest
import RSAKit

/// EME-OAEP on hand-built encoded messages, no keys (RFC 8017 §7.1): each test breaks one
/// field and expects the one opaque error.
final class EMEOAEPTests: XCTestCase {
    let k = 128
    let parameters = RSAOAEPParameters(hash: .sha256, mgf1Hash: .sha1, label: Array("label".utf8))

    /// EM = Y || maskedSeed || maskedDB with DB = lHash || PS || separator || M, every field given.
    func build(
        y: UInt8 = 0x00, lHash: [UInt8]? = nil, ps: [UInt8]? = nil, separator: UInt8 = 0x01,
        message: [UInt8], seed: [UInt8]? = nil, parameters p: RSAOAEPParameters? = nil
    ) -> [UInt8] {
        let p = p ?? parameters
        let hLen = p.hash.digestByteCount
        let lHash = lHash ?? p.hash.hash(p.label)
        let ps = ps ?? [UInt8](repeating: 0, count: k - message.count - 2 * hLen - 2)
        var db = lHash + ps + [separator] + message
        precondition(db.count == k - hLen - 1, "hand-built DB has the wrong length")
        var seed = seed ?? (0..<hLen).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        let dbMask = RSAHazmat.MGF1.mask(seed: seed, length: db.count, hash: p.mgf1Hash)
        for i in db.indices { db[i] ^= dbMask[i] }
        let seedMask = RSAHazmat.MGF1.mask(seed: db, length: hLen, hash: p.mgf1Hash)
        for i in seed.indices { seed[i] ^= seedMask[i] }
        return [y] + seed + db
    }

    func assertOpaqueFailure(_ em: [UInt8], _ what: String, parameters p: RSAOAEPParameters? = nil, line: UInt = #line)
    {
        XCTAssertThrowsError(try RSAHazmat.EMEOAEP.decode(em, parameters: p ?? parameters), what, line: line) { error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed, what, line: line)
        }
    }

    func testDecode_AcceptsHandBuiltMessages() throws {
        let maximum = k - 2 * 32 - 2
        for length in [0, 1, 17, maximum] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
            XCTAssertEqual(
                try RSAHazmat.EMEOAEP.decode(build(message: message), parameters: parameters), message,
                "length \(length)")
        }
        // M may start with 0x00 and 0x01: only the first non-zero octet after lHash separates.
        XCTAssertEqual(try RSAHazmat.EMEOAEP.decode(build(message: [0, 1, 0, 1]), parameters: parameters), [0, 1, 0, 1])
    }

    func testDecode_EveryMessageLengthComesOutWhole() throws {
        // The decode moves M to the front with a shift of one pass per bit of the PS length:
        // every length from 0 to the maximum, with maxima of 64 (a power of two: the top bit
        // of the PS length is then never shifted by) and 62, and bytes that look like PS (0x00)
        // and the separator (0x01) at the start of M.
        for (hash, k) in [(RSAHashAlgorithm.sha1, 106), (.sha256, 130), (.sha256, 128)] {
            let p = RSAOAEPParameters(hash: hash, label: Array("label".utf8))
            let maximum = k - p.overheadByteCount
            for length in 0...maximum {
                let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 % 3 == 2 ? $0 &* 29 : $0 % 3) }
                let em = try RSAHazmat.EMEOAEP.encode(message, encodedLength: k, parameters: p)
                XCTAssertEqual(
                    try RSAHazmat.EMEOAEP.decode(em, parameters: p), message, "\(hash) k=\(k) length \(length)")
            }
        }
    }

    func testDecode_RejectsNonZeroFirstByte() {
        for y: UInt8 in [0x01, 0x80, 0xFF] {
            assertOpaqueFailure(build(y: y, message: [1, 2, 3]), "Y = \(y)")
        }
    }

    func testDecode_RejectsWrongLabelHash() {
        for position in [0, 15, 31] {
            var lHash = parameters.hash.hash(parameters.label)
            lHash[position] ^= 0x01
            assertOpaqueFailure(build(lHash: lHash, message: [1, 2, 3]), "lHash byte \(position) flipped")
        }
    }

    func testDecode_RejectsNonZeroPS() {
        let psLength = k - 3 - 2 * 32 - 2
        for position in [0, psLength / 2, psLength - 1] {
            var ps = [UInt8](repeating: 0, count: psLength)
            ps[position] = 0x02
            assertOpaqueFailure(build(ps: ps, message: [1, 2, 3]), "PS[\(position)] = 0x02")
        }
    }

    func testDecode_RejectsWrongOrMissingSeparator() {
        assertOpaqueFailure(build(separator: 0x02, message: [1, 2, 3]), "separator 0x02")
        assertOpaqueFailure(build(separator: 0xFF, message: [1, 2, 3]), "separator 0xFF")
        // No 0x01 at all: DB = lHash || zeros.
        assertOpaqueFailure(build(separator: 0x00, message: [0, 0, 0]), "no separator")
    }

    func testDecode_RejectsOtherParameters() {
        let em = build(message: [1, 2, 3])
        assertOpaqueFailure(em, "wrong label", parameters: RSAOAEPParameters(hash: .sha256, mgf1Hash: .sha1, label: []))
        assertOpaqueFailure(
            em, "wrong MGF1 hash",
            parameters: RSAOAEPParameters(hash: .sha256, mgf1Hash: .sha256, label: parameters.label))
        assertOpaqueFailure(
            em, "wrong OAEP hash",
            parameters: RSAOAEPParameters(hash: .sha384, mgf1Hash: .sha1, label: parameters.label))
    }

    func testDecode_RejectsTooShortEM() {
        let p = RSAOAEPParameters(hash: .sha512)
        assertOpaqueFailure([UInt8](repeating: 0, count: 129), "129 < 2 * 64 + 2", parameters: p)
        assertOpaqueFailure([], "empty EM")
    }

    func testEncode_LayoutRoundTripAndFreshSeeds() throws {
        let random = DeterministicRandomSource(seed: 7)
        for hash in RSAHashAlgorithm.allCases {
            let p = RSAOAEPParameters(hash: hash, mgf1Hash: .sha1, label: [0xAA])
            let big = 256  // room for SHA-512's 2 * 64 + 2 octets
            let maximum = big - p.overheadByteCount
            for length in [0, maximum] {
                let message = [UInt8](repeating: 0xEE, count: length)
                let em = try RSAHazmat.EMEOAEP.encode(message, encodedLength: big, parameters: p, random: random)
                XCTAssertEqual(em.count, big)
                XCTAssertEqual(em[0], 0x00)
                XCTAssertEqual(
                    try RSAHazmat.EMEOAEP.decode(em, parameters: p), message, "\(hash.rawValue), \(length) bytes")
                let again = try RSAHazmat.EMEOAEP.encode(message, encodedLength: big, parameters: p, random: random)
                XCTAssertNotEqual(em, again, "each encoding draws a new seed")
            }
        }
        // Encoding with a seed we choose gives exactly the hand-built EM.
        final class FixedSeed: RSARandomSource, @unchecked Sendable {
            let bytes: [UInt8]
            init(_ bytes: [UInt8]) { self.bytes = bytes }
            func fill(_ buffer: UnsafeMutableRawBufferPointer) { for i in buffer.indices { buffer[i] = bytes[i] } }
        }
        let seed = (0..<32).map { UInt8($0) }
        XCTAssertEqual(
            try RSAHazmat.EMEOAEP.encode([5, 6], encodedLength: k, parameters: parameters, random: FixedSeed(seed)),
            build(message: [5, 6], seed: seed))
    }

    func testEncode_RejectsMessageTooLongWithTheMaximum() {
        let maximum = k - 2 * 32 - 2
        XCTAssertThrowsError(
            try RSAHazmat.EMEOAEP.encode(
                [UInt8](repeating: 1, count: maximum + 1), encodedLength: k, parameters: parameters)
        ) { error in
            XCTAssertEqual(error as? RSAError, .messageTooLong(byteCount: maximum + 1, maximum: maximum))
            XCTAssertEqual(
                "\(error)", "message too long: \(maximum + 1) bytes given, at most \(maximum) fit in one block")
        }
        XCTAssertThrowsError(
            try RSAHazmat.EMEOAEP.encode([], encodedLength: 128, parameters: RSAOAEPParameters(hash: .sha512))
        ) { error in
            XCTAssertEqual(
                error as? RSAError,
                .keyTooSmallForPadding(
                    modulusByteCount: 128, minimumByteCount: 130, padding: "OAEP SHA-512, MGF1-SHA-512, empty label"))
        }
    }
}
