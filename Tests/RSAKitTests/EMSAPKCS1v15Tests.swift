import XCTest
import RSAKit

/// EMSA-PKCS1-v1_5 on hand-built encoded messages, no keys (RFC 8017 §9.2).
final class EMSAPKCS1v15Tests: XCTestCase {
    let k = 256
    let digest = RSAHashAlgorithm.sha256.hash(Array("abc".utf8))

    /// EM = 0x00 || 0x01 || PS (0xFF) || 0x00 || T, every field given.
    func build(
        first: UInt8 = 0x00, type: UInt8 = 0x01, psByte: UInt8 = 0xFF, separator: UInt8 = 0x00, t: [UInt8]? = nil
    ) -> [UInt8] {
        let t = t ?? (RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha256) + digest)
        return [first, type] + [UInt8](repeating: psByte, count: k - t.count - 3) + [separator] + t
    }

    func testDigestInfo_PrefixesAreTheDEROfRFC8017AndNIST() {
        // RFC 8017 §9.2 note 1 (SHA-1, SHA-224, SHA-256, SHA-384, SHA-512, SHA-512/224, SHA-512/256).
        XCTAssertEqual(
            Hex.encode(RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha1)), "3021300906052b0e03021a05000414")
        XCTAssertEqual(
            Hex.encode(RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha224)), "302d300d06096086480165030402040500041c")
        XCTAssertEqual(
            Hex.encode(RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha256)), "3031300d060960864801650304020105000420")
        XCTAssertEqual(
            Hex.encode(RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha384)), "3041300d060960864801650304020205000430")
        XCTAssertEqual(
            Hex.encode(RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha512)), "3051300d060960864801650304020305000440")
        XCTAssertEqual(
            Hex.encode(RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha512_224)),
            "302d300d06096086480165030402050500041c")
        XCTAssertEqual(
            Hex.encode(RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha512_256)),
            "3031300d060960864801650304020605000420")
        // NIST CSOR: id-sha3-224 ... id-sha3-512 = 2.16.840.1.101.3.4.2.7 ... .10.
        XCTAssertEqual(
            Hex.encode(RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha3_224)),
            "302d300d06096086480165030402070500041c")
        XCTAssertEqual(
            Hex.encode(RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha3_256)),
            "3031300d060960864801650304020805000420")
        XCTAssertEqual(
            Hex.encode(RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha3_384)),
            "3041300d060960864801650304020905000430")
        XCTAssertEqual(
            Hex.encode(RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha3_512)),
            "3051300d060960864801650304020a05000440")
        for hash in RSAHashAlgorithm.allCases {
            let t = RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: hash) + hash.hash([])
            XCTAssertEqual(Int(t[1]), t.count - 2, "\(hash.rawValue): outer SEQUENCE length")
            XCTAssertEqual(
                Int(t[t.count - hash.digestByteCount - 1]), hash.digestByteCount,
                "\(hash.rawValue): OCTET STRING length")
        }
    }

    func testEncode_LayoutAndVerify() throws {
        let em = try RSAHazmat.EMSAPKCS1v15.encode(digest: digest, hash: .sha256, encodedLength: k)
        XCTAssertEqual(em, build())
        XCTAssertTrue(RSAHazmat.EMSAPKCS1v15.verify(encoded: em, digest: digest, hash: .sha256))
    }

    func testVerify_RejectsEachBrokenField() {
        XCTAssertFalse(
            RSAHazmat.EMSAPKCS1v15.verify(encoded: build(first: 0x01), digest: digest, hash: .sha256), "byte 0")
        XCTAssertFalse(
            RSAHazmat.EMSAPKCS1v15.verify(encoded: build(type: 0x02), digest: digest, hash: .sha256), "block type 2")
        XCTAssertFalse(
            RSAHazmat.EMSAPKCS1v15.verify(encoded: build(type: 0x00), digest: digest, hash: .sha256), "block type 0")
        XCTAssertFalse(
            RSAHazmat.EMSAPKCS1v15.verify(encoded: build(psByte: 0xFE), digest: digest, hash: .sha256), "PS not 0xFF")
        XCTAssertFalse(
            RSAHazmat.EMSAPKCS1v15.verify(encoded: build(separator: 0x01), digest: digest, hash: .sha256), "separator")
        var em = build(); em[20] = 0x00
        XCTAssertFalse(RSAHazmat.EMSAPKCS1v15.verify(encoded: em, digest: digest, hash: .sha256), "a zero inside PS")
        // DigestInfo without the NULL parameters (30 2f 30 0b 06 09 OID 04 20 H): a BER-ish variant Wycheproof calls
        // MissingNull.
        let noNull: [UInt8] =
            [0x30, 0x2F, 0x30, 0x0B, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x04, 0x20]
            + digest
        XCTAssertFalse(
            RSAHazmat.EMSAPKCS1v15.verify(encoded: build(t: noNull), digest: digest, hash: .sha256), "missing NULL")
        // Wrong OID arc (SHA-512/256's) with the right digest.
        XCTAssertFalse(
            RSAHazmat.EMSAPKCS1v15.verify(
                encoded: build(t: RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha512_256) + digest), digest: digest,
                hash: .sha256), "other hash OID")
        var wrongDigest = digest; wrongDigest[31] ^= 1
        XCTAssertFalse(
            RSAHazmat.EMSAPKCS1v15.verify(
                encoded: build(t: RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha256) + wrongDigest), digest: digest,
                hash: .sha256), "digest")
        XCTAssertFalse(
            RSAHazmat.EMSAPKCS1v15.verify(encoded: Array(build().dropFirst()), digest: digest, hash: .sha256),
            "EM one octet short")
        XCTAssertFalse(
            RSAHazmat.EMSAPKCS1v15.verify(encoded: build(), digest: Array(digest.dropLast()), hash: .sha256),
            "digest of the wrong length")
        // Trailing garbage after T, PS one octet shorter to keep k octets.
        let t = RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha256) + digest
        let garbage: [UInt8] = [0x00, 0x01] + [UInt8](repeating: 0xFF, count: k - t.count - 4) + [0x00] + t + [0x00]
        XCTAssertEqual(garbage.count, k)
        XCTAssertFalse(RSAHazmat.EMSAPKCS1v15.verify(encoded: garbage, digest: digest, hash: .sha256), "trailing octet")
    }

    func testEncode_RejectsShortPSAndWrongDigestLength() {
        let t = RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha512) + RSAHashAlgorithm.sha512.hash([])
        XCTAssertNoThrow(
            try RSAHazmat.EMSAPKCS1v15.encode(digestInfo: t, encodedLength: t.count + 11), "PS of exactly 8 octets")
        XCTAssertThrowsError(try RSAHazmat.EMSAPKCS1v15.encode(digestInfo: t, encodedLength: t.count + 10)) {
            XCTAssertEqual(
                $0 as? RSAError,
                .keyTooSmallForPadding(
                    modulusByteCount: t.count + 10, minimumByteCount: t.count + 11, padding: "PKCS#1 v1.5 signatures"))
        }
        XCTAssertFalse(
            RSAHazmat.EMSAPKCS1v15.verify(
                encoded: [0x00, 0x01] + [UInt8](repeating: 0xFF, count: 7) + [0x00] + t, digestInfo: t), "PS of 7")
        XCTAssertThrowsError(try RSAHazmat.EMSAPKCS1v15.encode(digest: [1, 2, 3], hash: .sha256, encodedLength: k)) {
            XCTAssertEqual($0 as? RSAError, .digestLengthMismatch(byteCount: 3, expected: 32))
        }
    }
}
