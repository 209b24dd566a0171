import XCTest
@testable import RSAKit

/// The framed rsakit container: round trips and every tampering the frame must detect.
final class ContainerTests: XCTestCase {
    func seal(_ plaintext: [UInt8], _ key: RSAPrivateKey) throws -> [UInt8] {
        var source = ArrayByteSource(plaintext)
        var sink = ArrayByteSink()
        try MessageContainer.encrypt(from: &source, to: &sink, with: key.publicKey)
        return sink.bytes
    }

    func open(_ container: [UInt8], _ key: RSAPrivateKey, concurrency: Int = 2) throws -> [UInt8] {
        let header = try MessageContainer.Header(parsing: container)
        var source = ArrayByteSource(Array(container[MessageContainer.headerByteCount...]))
        var sink = ArrayByteSink()
        try MessageContainer.decrypt(header: header, from: &source, to: &sink, with: key, concurrency: concurrency)
        return sink.bytes
    }

    func blocks(_ container: [UInt8], k: Int) -> (header: [UInt8], blocks: [[UInt8]]) {
        let body = Array(container[MessageContainer.headerByteCount...])
        return (Array(container[0..<MessageContainer.headerByteCount]),
                stride(from: 0, to: body.count, by: k).map { Array(body[$0..<($0 + k)]) })
    }

    func assertOpaque(_ container: [UInt8], _ key: RSAPrivateKey, _ what: String, line: UInt = #line) {
        XCTAssertThrowsError(try open(container, key), what, line: line) { error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed, what, line: line)
        }
    }

    func testRoundTrip_Lengths() throws {
        let key = try TestKeys.generated(bits: 1024)
        let payload = MessageContainer.payloadByteCount(blockSize: 128)
        XCTAssertEqual(payload, 100)
        for length in [0, 1, payload - 1, payload, payload + 1, 5 * payload, 10_000] {
            let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 13) }
            let container = try seal(plaintext, key)
            let expectedBlocks = max(1, (length + payload - 1) / payload)
            XCTAssertEqual(container.count, 60 + expectedBlocks * 128, "length \(length)")
            let header = try MessageContainer.Header(parsing: container)
            XCTAssertEqual(header.blockSize, 128)
            XCTAssertEqual(header.recipientFingerprint, key.publicKey.fingerprint.bytes)
            XCTAssertEqual(try open(container, key, concurrency: 1), plaintext, "length \(length)")
            XCTAssertEqual(try open(container, key, concurrency: 2), plaintext, "length \(length)")
        }
    }

    func testHeader_LayoutMatchesREADME() throws {
        let key = try TestKeys.generated(bits: 2048)
        let container = try seal([1, 2, 3], key)
        XCTAssertEqual(Array(container[0..<8]), [0x89, 0x52, 0x53, 0x41, 0x4B, 0x49, 0x54, 0x0A])
        XCTAssertEqual(container[8], 1)
        XCTAssertEqual(container[9], 1)
        XCTAssertEqual(Array(container[10..<12]), [0x01, 0x00]) // k = 256
        XCTAssertEqual(Array(container[12..<44]), key.publicKey.fingerprint.bytes)
        XCTAssertEqual(Array(container[12..<44]), SHA256.hash(key.publicKey.derRepresentation))
        // The block is plain RSAES-PKCS1-v1_5: its plaintext is the frame.
        let frame = try key.decrypt(Array(container[60..<316]))
        XCTAssertEqual(Array(frame[0..<8]), Array(container[44..<52]))
        XCTAssertEqual(Array(frame[8..<16]), [0, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(frame[16], 0x01)
        XCTAssertEqual(Array(frame[17...]), [1, 2, 3])
    }

    func testTampering_ReorderDropDuplicateTruncateExtend() throws {
        let key = try TestKeys.generated(bits: 1024)
        let plaintext = (0..<450).map { UInt8(truncatingIfNeeded: $0) }
        let (header, b) = blocks(try seal(plaintext, key), k: 128)
        XCTAssertEqual(b.count, 5)
        assertOpaque(header + [b[1], b[0], b[2], b[3], b[4]].flatMap { $0 }, key, "swapped blocks 0 and 1")
        assertOpaque(header + [b[0], b[2], b[3], b[4]].flatMap { $0 }, key, "dropped block 1")
        assertOpaque(header + [b[0], b[1], b[1], b[2], b[3], b[4]].flatMap { $0 }, key, "duplicated block 1")
        assertOpaque(header + [b[0], b[1], b[2], b[3]].flatMap { $0 }, key, "truncated: final block missing")
        assertOpaque(header + [b[0], b[1], b[2], b[3], b[4], b[4]].flatMap { $0 }, key, "extended after the final block")
        assertOpaque(header, key, "no blocks at all")
    }

    func testTampering_SpliceFromAnotherMessage() throws {
        let key = try TestKeys.generated(bits: 1024)
        let plaintext = [UInt8](repeating: 0x33, count: 300)
        let (h1, a) = blocks(try seal(plaintext, key), k: 128)
        let (h2, b) = blocks(try seal(plaintext, key), k: 128)
        XCTAssertNotEqual(h1, h2, "fresh message ids")
        assertOpaque(h1 + [a[0], b[1], a[2]].flatMap { $0 }, key, "block 1 from another message")
        assertOpaque(h2 + a.flatMap { $0 }, key, "header of another message")
    }

    func testTampering_CorruptedByte() throws {
        let key = try TestKeys.generated(bits: 1024)
        var container = try seal([UInt8](repeating: 1, count: 250), key)
        container[60 + 128 + 7] ^= 0x40
        assertOpaque(container, key, "flipped bit in block 1")
    }

    func testHeader_RejectsBadMagicVersionAndScheme() throws {
        let key = try TestKeys.generated(bits: 1024)
        let container = try seal([1], key)
        var bad = container; bad[1] = 0x00
        XCTAssertThrowsError(try MessageContainer.Header(parsing: bad)) { error in
            XCTAssertEqual(error as? RSAError, .containerInvalid(reason: "not an rsakit container (wrong magic)"))
        }
        bad = container; bad[8] = 2
        XCTAssertThrowsError(try MessageContainer.Header(parsing: bad)) { error in
            XCTAssertEqual(error as? RSAError, .containerInvalid(reason: "unsupported container version 2 (this rsakit reads version 1)"))
        }
        bad = container; bad[9] = 9
        XCTAssertThrowsError(try MessageContainer.Header(parsing: bad))
        XCTAssertThrowsError(try MessageContainer.Header(parsing: Array(container.prefix(59))))
        XCTAssertTrue(MessageContainer.hasMagic(container))
        XCTAssertFalse(MessageContainer.hasMagic(Array(container[60...])))
    }

    func testDecrypt_AnotherKeyOfTheSameSizeIsRejectedBeforeDecrypting() throws {
        let key = try TestKeys.generated(bits: 1024)
        let other = try RSAPrivateKey.generate(bitCount: 1024)
        XCTAssertThrowsError(try open(try seal([5], key), other)) { error in
            XCTAssertEqual(error as? RSAError, .containerInvalid(reason: "encrypted for another key"))
        }
    }

    func testDecrypt_WrongKeySizeIsReportedFromTheHeader() throws {
        let small = try TestKeys.generated(bits: 1024)
        let big = try TestKeys.generated(bits: 2048)
        let container = try seal([1, 2], small)
        XCTAssertThrowsError(try open(container, big)) { error in
            XCTAssertEqual(error as? RSAError, .containerInvalid(reason: "block size 128 does not match the key's 256"))
        }
    }
}
