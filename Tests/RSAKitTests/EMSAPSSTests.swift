import XCTest
import RSAKit

/// EMSA-PSS on hand-built encoded messages, no keys (RFC 8017 §9.1).
final class EMSAPSSTests: XCTestCase {
    let emBits = 2047  // a 2048-bit modulus: emLen = 256, top bit cleared
    let hash = RSAHashAlgorithm.sha256
    let mHash = RSAHashAlgorithm.sha256.hash(Array("message".utf8))
    let salt: [UInt8] = (0..<32).map { UInt8($0 &* 3 &+ 1) }

    /// EM = maskedDB || H || trailer with DB = PS || separator || salt, every field given.
    func build(
        emBits: Int? = nil, ps: [UInt8]? = nil, separator: UInt8 = 0x01, salt: [UInt8]? = nil, h: [UInt8]? = nil,
        trailer: UInt8 = 0xBC, clearTopBits: Bool = true, mgf1: RSAHashAlgorithm = .sha256
    ) -> [UInt8] {
        let emBits = emBits ?? self.emBits
        let emLen = (emBits + 7) / 8
        let salt = salt ?? self.salt
        let hLen = hash.digestByteCount
        let h = h ?? hash.hash([UInt8](repeating: 0, count: 8) + mHash + salt)
        var db = (ps ?? [UInt8](repeating: 0, count: emLen - salt.count - hLen - 2)) + [separator] + salt
        precondition(db.count == emLen - hLen - 1)
        let mask = RSAHazmat.MGF1.mask(seed: h, length: db.count, hash: mgf1)
        for i in db.indices { db[i] ^= mask[i] }
        if clearTopBits { db[0] &= UInt8(0xFF >> (8 * emLen - emBits)) }
        return db + h + [trailer]
    }

    func verify(
        _ em: [UInt8], emBits: Int? = nil, saltLength: Int? = 32, mgf1: RSAHashAlgorithm = .sha256,
        digest: [UInt8]? = nil
    ) -> Bool {
        RSAHazmat.EMSAPSS.verify(
            digest: digest ?? mHash, encoded: em, encodedBitCount: emBits ?? self.emBits, hash: hash, mgf1Hash: mgf1,
            saltLength: saltLength)
    }

    func testVerify_AcceptsHandBuiltAndAutoRecoversTheSalt() {
        XCTAssertTrue(verify(build()))
        XCTAssertTrue(verify(build(), saltLength: nil), "auto")
        XCTAssertTrue(verify(build(salt: []), saltLength: 0))
        XCTAssertTrue(verify(build(salt: []), saltLength: nil), "auto with an empty salt")
        let longest = [UInt8](repeating: 0x77, count: 256 - 32 - 2)
        XCTAssertTrue(verify(build(ps: [], salt: longest), saltLength: 222), "maximum salt")
        XCTAssertTrue(verify(build(mgf1: .sha1), mgf1: .sha1))
    }

    func testVerify_RejectsEachBrokenField() {
        XCTAssertFalse(verify(build(trailer: 0xBD)), "trailer 0xBC")
        XCTAssertFalse(verify(build(clearTopBits: false).enumerated().map { $0 == 0 ? $1 | 0x80 : $1 }), "top bit set")
        var ps = [UInt8](repeating: 0, count: 256 - 32 - 32 - 2); ps[10] = 0x01
        XCTAssertFalse(verify(build(ps: ps)), "non-zero PS")
        XCTAssertFalse(verify(build(separator: 0x02)), "separator 0x02")
        XCTAssertFalse(verify(build(separator: 0x00)), "no separator")
        var h = hash.hash([UInt8](repeating: 0, count: 8) + mHash + salt); h[0] ^= 1
        XCTAssertFalse(verify(build(h: h)), "H altered")
        var digest = mHash; digest[31] ^= 1
        XCTAssertFalse(verify(build(), digest: digest), "other message")
        XCTAssertFalse(verify(build(), saltLength: 31), "salt length 31 asked, 32 used")
        XCTAssertFalse(verify(build(), saltLength: 33), "salt length 33 asked, 32 used")
        XCTAssertFalse(verify(build(), mgf1: .sha1), "other MGF1 hash")
        XCTAssertFalse(verify(Array(build().dropFirst())), "EM one octet short")
        XCTAssertFalse(verify(build(), saltLength: 300), "salt longer than fits")
        XCTAssertFalse(verify(build(), digest: Array(mHash.dropLast())), "digest of the wrong length")
    }

    func testEncodedBitCount_OneMod8DropsAnOctet() throws {
        // A 2049-bit modulus: emBits = 2048, emLen = 256 = k - 1, nothing to clear.
        let em = build(emBits: 2048)
        XCTAssertEqual(em.count, 256)
        XCTAssertTrue(verify(em, emBits: 2048))
        // A 2046-bit modulus: emBits = 2045, the top three bits of EM must be zero.
        let short = build(emBits: 2045)
        XCTAssertEqual(short[0] & 0xE0, 0)
        XCTAssertTrue(verify(short, emBits: 2045))
        XCTAssertFalse(verify(short.enumerated().map { $0 == 0 ? $1 | 0x20 : $1 }, emBits: 2045), "bit 2045 set")
    }

    func testEncode_RoundTripAndErrors() throws {
        let random = DeterministicRandomSource(seed: 3)
        for hash in RSAHashAlgorithm.allCases {
            let digest = hash.hash([1, 2, 3])
            for saltLength in [
                0, hash.digestByteCount,
                RSAHazmat.EMSAPSS.maximumSaltLength(encodedBitCount: 2047, digestByteCount: hash.digestByteCount)
            ] {
                let em = try RSAHazmat.EMSAPSS.encode(
                    digest: digest, encodedBitCount: 2047, hash: hash, mgf1Hash: .sha1, saltLength: saltLength,
                    random: random)
                XCTAssertEqual(em.count, 256)
                XCTAssertEqual(em.last, 0xBC)
                XCTAssertEqual(em[0] & 0x80, 0)
                XCTAssertTrue(
                    RSAHazmat.EMSAPSS.verify(
                        digest: digest, encoded: em, encodedBitCount: 2047, hash: hash, mgf1Hash: .sha1,
                        saltLength: saltLength), "\(hash.rawValue) salt \(saltLength)")
                XCTAssertTrue(
                    RSAHazmat.EMSAPSS.verify(
                        digest: digest, encoded: em, encodedBitCount: 2047, hash: hash, mgf1Hash: .sha1, saltLength: nil
                    ))
            }
        }
        XCTAssertThrowsError(
            try RSAHazmat.EMSAPSS.encode(
                digest: mHash, encodedBitCount: 2047, hash: hash, mgf1Hash: hash, saltLength: 223)
        ) {
            XCTAssertEqual($0 as? RSAError, .saltLengthInvalid(byteCount: 223, maximum: 222))
        }
        XCTAssertThrowsError(
            try RSAHazmat.EMSAPSS.encode(
                digest: mHash, encodedBitCount: 2047, hash: hash, mgf1Hash: hash, saltLength: -1)
        ) {
            XCTAssertEqual($0 as? RSAError, .saltLengthInvalid(byteCount: -1, maximum: 222))
        }
        XCTAssertThrowsError(
            try RSAHazmat.EMSAPSS.encode(digest: [0], encodedBitCount: 2047, hash: hash, mgf1Hash: hash, saltLength: 0)
        ) {
            XCTAssertEqual($0 as? RSAError, .digestLengthMismatch(byteCount: 1, expected: 32))
        }
        let sha512 = RSAHashAlgorithm.sha512.hash([])
        XCTAssertThrowsError(
            try RSAHazmat.EMSAPSS.encode(
                digest: sha512, encodedBitCount: 8 * 60, hash: .sha512, mgf1Hash: .sha512, saltLength: 0)
        ) {
            XCTAssertEqual(
                $0 as? RSAError,
                .keyTooSmallForPadding(
                    modulusByteCount: 60, minimumByteCount: 66, padding: "PSS SHA-512 with MGF1-SHA-512"))
        }
    }
}
