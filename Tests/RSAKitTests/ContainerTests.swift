import XCTest
import RSAKit

/// The rsakit container, version 2: round trips, layout, and every tampering the frame detects.
final class ContainerTests: XCTestCase {
    func seal(_ plaintext: [UInt8], _ key: RSAPrivateKey, padding: RSAEncryptionPadding = .pkcs1v15) throws -> [UInt8] {
        try RSAMessageContainer.encrypt(plaintext, to: key.publicKey, padding: padding)
    }

    func open(_ container: [UInt8], _ key: RSAPrivateKey, concurrency: Int = 2) throws -> [UInt8] {
        let header = try RSAMessageContainer.Header(parsing: container)
        var source = RSAArrayByteSource(Array(container[header.byteCount...]))
        var sink = RSAArrayByteSink()
        try RSAMessageContainer.decrypt(header: header, from: &source, to: &sink, with: key, concurrency: concurrency)
        return sink.bytes
    }

    func blocks(_ container: [UInt8], k: Int) -> (header: [UInt8], blocks: [[UInt8]]) {
        let body = Array(container[64...])
        return (Array(container[0..<64]), stride(from: 0, to: body.count, by: k).map { Array(body[$0..<($0 + k)]) })
    }

    func assertOpaque(_ container: [UInt8], _ key: RSAPrivateKey, _ what: String, line: UInt = #line) {
        XCTAssertThrowsError(try open(container, key), what, line: line) { error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed, what, line: line)
        }
    }

    func testRoundTrip_Lengths() throws {
        let key = try TestKeys.generated(bits: 1024)
        let payload = RSAMessageContainer.payloadByteCount(blockSize: 128)
        XCTAssertEqual(payload, 128 - 11 - 57)
        for length in [0, 1, payload - 1, payload, payload + 1, 5 * payload, 10_000] {
            let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 13) }
            let container = try seal(plaintext, key)
            let expectedBlocks = max(1, (length + payload - 1) / payload)
            XCTAssertEqual(container.count, 64 + expectedBlocks * 128, "length \(length)")
            let header = try RSAMessageContainer.Header(parsing: container)
            XCTAssertEqual(header.version, 2)
            XCTAssertEqual(header.blockSize, 128)
            XCTAssertEqual(header.recipientFingerprint, key.publicKey.fingerprint)
            XCTAssertEqual(try open(container, key, concurrency: 1), plaintext, "length \(length)")
            XCTAssertEqual(try open(container, key, concurrency: 2), plaintext, "length \(length)")
        }
    }

    func testRoundTrip_OAEPHeaderRecordsTheHashes() throws {
        let key = try TestKeys.generated(bits: 2048)
        let cases: [(RSAHashAlgorithm, RSAHashAlgorithm, UInt8, UInt8)] = [
            (.sha256, .sha256, 0x03, 0x03), (.sha256, .sha1, 0x03, 0x01), (.sha512, .sha384, 0x05, 0x04),
            (.sha3_256, .sha512_256, 0x09, 0x07)
        ]
        for (hash, mgf1, hashID, mgf1ID) in cases {
            let padding = RSAEncryptionPadding.oaep(RSAOAEPParameters(hash: hash, mgf1Hash: mgf1))
            let plaintext = (0..<700).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let container = try seal(plaintext, key, padding: padding)
            XCTAssertEqual(Array(container[9..<14]), [0x02, hashID, mgf1ID, 0x00, 0x00], "\(hash)/\(mgf1)")
            let header = try RSAMessageContainer.Header(parsing: container)
            XCTAssertEqual(header.padding, padding)
            let payload = RSAMessageContainer.payloadByteCount(blockSize: 256, padding: padding)
            XCTAssertEqual(payload, 256 - 2 * hash.digestByteCount - 2 - 57)
            XCTAssertEqual(container.count, 64 + 256 * ((700 + payload - 1) / payload))
            XCTAssertEqual(try open(container, key), plaintext)
            // Each block is plain RSAES-OAEP with the recorded parameters.
            XCTAssertNoThrow(try key.decrypt(Array(container[64..<320]), padding: padding))
            try assertPKCS1v15RejectsOAEPBlock(Array(container[64..<320]), key: key, "\(hash)/\(mgf1)")
        }
    }

    func testEncrypt_RefusesAnOAEPLabel() throws {
        let key = try TestKeys.generated(bits: 1024)
        let padding = RSAEncryptionPadding.oaep(RSAOAEPParameters(hash: .sha1, label: [1]))
        XCTAssertThrowsError(try seal([1], key, padding: padding)) { error in
            guard case .messageFormatUnsupported = error as? RSAError else { return XCTFail("\(error)") }
        }
    }

    func testHeaderAndFrame_LayoutMatchesREADME() throws {
        let key = try TestKeys.generated(bits: 2048)
        let container = try seal([1, 2, 3], key)
        XCTAssertEqual(container.count, 64 + 256)
        XCTAssertEqual(Array(container[0..<8]), [0x89, 0x52, 0x53, 0x41, 0x4B, 0x49, 0x54, 0x0A])
        XCTAssertEqual(Array(container[8..<14]), [0x02, 0x01, 0x00, 0x00, 0x00, 0x00])
        XCTAssertEqual(Array(container[14..<16]), [0x01, 0x00])  // k = 256
        XCTAssertEqual(Array(container[16..<48]), RSAHashAlgorithm.sha256.hash(key.publicKey.derRepresentation))
        // The block is plain RSAES-PKCS1-v1_5: its plaintext is the frame.
        let frame = try key.decrypt(Array(container[64..<320]))
        XCTAssertEqual(frame.count, 57 + 3)
        let secret = Array(frame[0..<16])
        XCTAssertEqual(Array(frame[16..<48]), RSAHashAlgorithm.sha256.hash(Array(container[0..<64])))
        XCTAssertEqual(Array(frame[48..<56]), [0, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(frame[56], 0x01)
        XCTAssertEqual(Array(frame[57...]), [1, 2, 3])
        // The secret appears nowhere outside the encrypted blocks.
        XCTAssertFalse(contains(container, secret), "secret in the clear")
        XCTAssertNotEqual(secret, Array(container[48..<64]))
        // Every block of one message carries the same secret; another message has another.
        let long = try seal([UInt8](repeating: 9, count: 400), key)
        let secrets = try (0..<3).map {
            try Array(key.decrypt(Array(long[(64 + 256 * $0)..<(64 + 256 * ($0 + 1))]))[0..<16])
        }
        XCTAssertEqual(Set(secrets.map { $0 }).count, 1)
        XCTAssertNotEqual(secrets[0], secret)
    }

    func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    func testTampering_ReorderDropDuplicateTruncateExtend() throws {
        let key = try TestKeys.generated(bits: 1024)
        let plaintext = (0..<250).map { UInt8(truncatingIfNeeded: $0) }
        let (header, b) = blocks(try seal(plaintext, key), k: 128)
        XCTAssertEqual(b.count, 5)
        assertOpaque(header + [b[1], b[0], b[2], b[3], b[4]].flatMap { $0 }, key, "swapped blocks 0 and 1")
        assertOpaque(header + [b[0], b[2], b[3], b[4]].flatMap { $0 }, key, "dropped block 1")
        assertOpaque(header + [b[0], b[1], b[1], b[2], b[3], b[4]].flatMap { $0 }, key, "duplicated block 1")
        assertOpaque(header + [b[0], b[1], b[2], b[3]].flatMap { $0 }, key, "truncated: final block missing")
        assertOpaque(
            header + [b[0], b[1], b[2], b[3], b[4], b[4]].flatMap { $0 }, key, "extended after the final block")
        assertOpaque(header, key, "no blocks at all")
    }

    func testTampering_SpliceFromAnotherMessage() throws {
        let key = try TestKeys.generated(bits: 1024)
        let plaintext = [UInt8](repeating: 0x33, count: 150)
        let (h1, a) = blocks(try seal(plaintext, key), k: 128)
        let (h2, b) = blocks(try seal(plaintext, key), k: 128)
        XCTAssertNotEqual(h1, h2, "fresh message ids")
        assertOpaque(h1 + [a[0], b[1], a[2]].flatMap { $0 }, key, "block 1 from another message")
        assertOpaque(h2 + a.flatMap { $0 }, key, "header of another message")
    }

    func testTampering_CorruptedByte() throws {
        let key = try TestKeys.generated(bits: 1024)
        var container = try seal([UInt8](repeating: 1, count: 100), key)
        container[64 + 128 + 7] ^= 0x40
        assertOpaque(container, key, "flipped bit in block 1")
    }

    func testTampering_EveryHeaderByteFlippedFails() throws {
        let key = try TestKeys.generated(bits: 1024)
        let container = try seal((0..<150).map { UInt8($0) }, key)
        XCTAssertEqual(try open(container, key), (0..<150).map { UInt8($0) })
        for offset in 0..<64 {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var bad = container
                bad[offset] ^= mask
                XCTAssertThrowsError(
                    try RSAMessageContainer.decrypt(bad, with: key),
                    "header byte \(offset) ^ \(mask) still decrypts")
            }
        }
        // Bytes 48-63 (the message id, not checked by the header parser) fail opaquely.
        for offset in 48..<64 {
            var bad = container
            bad[offset] ^= 0x01
            XCTAssertThrowsError(try RSAMessageContainer.decrypt(bad, with: key)) { error in
                XCTAssertEqual(error as? RSAError, .decryptionFailed, "byte \(offset)")
            }
        }
    }

    func testHeader_RejectsBadMagicVersionSchemeAndFields() throws {
        let key = try TestKeys.generated(bits: 1024)
        let container = try seal([1], key)
        func reason(_ bytes: [UInt8]) -> String? {
            do { _ = try RSAMessageContainer.Header(parsing: bytes); return nil } catch let RSAError.containerInvalid(
                reason)
            { return reason } catch { return "\(error)" }
        }
        var bad = container; bad[1] = 0x00
        XCTAssertEqual(reason(bad), "not an rsakit container (wrong magic)")
        bad = container; bad[8] = 3
        XCTAssertEqual(reason(bad), "unsupported container version 3 (this rsakit reads versions 1 and 2)")
        bad = container; bad[9] = 9
        XCTAssertEqual(reason(bad), "unsupported padding scheme 9")
        bad = container; bad[10] = 3
        XCTAssertEqual(reason(bad), "PKCS#1 v1.5 header with non-zero OAEP fields")
        bad = container; bad[13] = 1
        XCTAssertEqual(reason(bad), "reserved header byte 13 is 1, not 0")
        bad = container; bad[9] = 2; bad[10] = 0x0C; bad[11] = 3
        XCTAssertEqual(reason(bad), "unknown OAEP hash 12")
        bad = container; bad[9] = 2; bad[10] = 3; bad[11] = 3; bad[12] = 1
        XCTAssertEqual(reason(bad), "unsupported OAEP label form 1 (only 0, the empty label)")
        XCTAssertEqual(reason(Array(container.prefix(63))), "input is shorter than the 64-byte container header")
        XCTAssertTrue(RSAMessageContainer.hasMagic(container))
        XCTAssertFalse(RSAMessageContainer.hasMagic(Array(container[64...])))
    }

    func testDecrypt_AnotherKeyIsATypedErrorBeforeDecrypting() throws {
        let key = try TestKeys.generated(bits: 1024)
        let other = try RSAPrivateKey.generate(bitCount: 1024)
        let bigger = try TestKeys.generated(bits: 2048)
        for wrong in [other, bigger] {
            XCTAssertThrowsError(try open(try seal([5], key), wrong)) { error in
                XCTAssertEqual(error as? RSAError, .encryptedForAnotherKey(expected: key.publicKey.fingerprint))
                XCTAssertEqual(
                    (error as? LocalizedError)?.errorDescription,
                    "encrypted for another key (\(key.publicKey.fingerprint.base64String))")
            }
        }
    }

    func testDecrypt_BlockSizeNotTheKeysIsReportedFromTheHeader() throws {
        let key = try TestKeys.generated(bits: 1024)
        var container = try seal([1, 2], key)
        container[14] = 0x01; container[15] = 0x00  // k = 256 for a 128-byte key
        XCTAssertThrowsError(try RSAMessageContainer.decrypt(container, with: key)) { error in
            XCTAssertEqual(error as? RSAError, .containerInvalid(reason: "block size 256 does not match the key's 128"))
        }
    }
}
