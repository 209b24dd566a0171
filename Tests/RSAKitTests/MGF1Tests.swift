import XCTest
import RSAKit

/// MGF1 (RFC 8017 B.2.1) as a pure byte function.
final class MGF1Tests: XCTestCase {
    /// MGF1 against the construction written out with the hash layer, and known answers:
    /// MGF1-SHA-1("foo", 3) = 1ac907, ("foo", 5) = 1ac9075cd4, ("bar", 5) = bc0c655e01 (the
    /// usual published examples), and MGF1-SHA-256("bar", 50) computed with Python's hashlib.
    func testMGF1_KnownAnswersAndDefinition() {
        XCTAssertEqual(Hex.encode(RSAHazmat.MGF1.mask(seed: Array("foo".utf8), length: 3, hash: .sha1)), "1ac907")
        XCTAssertEqual(Hex.encode(RSAHazmat.MGF1.mask(seed: Array("foo".utf8), length: 5, hash: .sha1)), "1ac9075cd4")
        XCTAssertEqual(Hex.encode(RSAHazmat.MGF1.mask(seed: Array("bar".utf8), length: 5, hash: .sha1)), "bc0c655e01")
        XCTAssertEqual(
            Hex.encode(RSAHazmat.MGF1.mask(seed: Array("bar".utf8), length: 50, hash: .sha256)),
            "382576a7841021cc28fc4c0948753fb8312090cea942ea4c4e735d10dc724b155f9f6069f289d61daca0cb814502ef04eae1")
        let seed: [UInt8] = [9, 8, 7]
        for hash in RSAHashAlgorithm.allCases {
            let expected =
                (hash.hash(seed + [0, 0, 0, 0]) + hash.hash(seed + [0, 0, 0, 1]) + hash.hash(seed + [0, 0, 0, 2]))
            XCTAssertEqual(
                RSAHazmat.MGF1.mask(seed: seed, length: 2 * hash.digestByteCount + 1, hash: hash),
                Array(expected.prefix(2 * hash.digestByteCount + 1)), hash.rawValue)
            XCTAssertEqual(RSAHazmat.MGF1.mask(seed: seed, length: 0, hash: hash), [])
        }
    }
}
