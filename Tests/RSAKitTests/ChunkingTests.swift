import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// Raw block chunking (concatenated k-byte EME-PKCS1-v1_5 blocks).
final class ChunkingTests: XCTestCase {
    func message(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    }

    func roundTrip(_ key: RSAPrivateKey, line: UInt = #line) throws {
        let k = key.modulusByteCount
        let m = k - 11
        for length in [0, 1, m, m + 1, 2 * m, 2 * m + 1] {
            let plaintext = message(length)
            let ciphertext = try RSAPKCS1v15Chunking.encrypt(plaintext, with: key.publicKey)
            let blocks = (length + m - 1) / m
            XCTAssertEqual(ciphertext.count, blocks * k, "\(key.modulusBitCount) bits, length \(length)", line: line)
            XCTAssertEqual(
                try RSAPKCS1v15Chunking.decrypt(ciphertext, with: key), plaintext,
                "\(key.modulusBitCount) bits, length \(length)", line: line)
            // Each block decrypts alone with the one-block API, carrying at most k - 11 bytes.
            for b in 0..<blocks {
                let block = Array(ciphertext[(b * k)..<((b + 1) * k)])
                let piece = try key.decrypt(block)
                XCTAssertEqual(piece, Array(plaintext[(b * m)..<min(length, (b + 1) * m)]), line: line)
            }
        }
    }

    func testRoundTrip_StandardSizes() throws {
        for bits in [1024, 2048, 3072] {
            try roundTrip(try TestKeys.generated(bits: bits))
        }
        if longTestsEnabled {
            try roundTrip(try TestKeys.generated(bits: 4096))
        }
    }

    func testRoundTrip_OddSizes() throws {
        for bits in [2047, 2049] {
            try roundTrip(try TestKeys.generated(bits: bits))
        }
    }

    func testEmptyInputGivesEmptyOutput() throws {
        let key = try TestKeys.generated(bits: 1024)
        XCTAssertEqual(try RSAPKCS1v15Chunking.encrypt([], with: key.publicKey), [])
        XCTAssertEqual(try RSAPKCS1v15Chunking.decrypt([], with: key), [])
    }

    func testDecrypt_RejectsLengthNotMultipleOfK() throws {
        let key = try TestKeys.generated(bits: 1024)
        let ciphertext = try RSAPKCS1v15Chunking.encrypt(message(300), with: key.publicKey)
        for bad in [Array(ciphertext.dropLast()), ciphertext + [0], Array(ciphertext.prefix(5))] {
            XCTAssertThrowsError(try RSAPKCS1v15Chunking.decrypt(bad, with: key)) { error in
                XCTAssertEqual(error as? RSAError, .ciphertextLengthInvalid(byteCount: bad.count, blockSize: 128))
            }
        }
    }

    /// A source that hides its length and returns short reads, like a pipe.
    struct TrickleSource: RSAByteSource {
        var inner: RSAArrayByteSource
        var step = 0
        mutating func read(upTo maximumCount: Int) throws -> [UInt8] {
            step += 1
            return try inner.read(upTo: min(maximumCount, 1 + step % 97))
        }
    }

    func testStreaming_ShortReadsParallelAndSerialAgree() throws {
        let key = try TestKeys.generated(bits: 1024)
        let plaintext = message(117 * 150 + 17)
        var source = TrickleSource(inner: RSAArrayByteSource(plaintext))
        var sink = CountingSink()
        let blocks = try RSAPKCS1v15Chunking.encrypt(from: &source, to: &sink, with: key.publicKey, concurrency: 2)
        XCTAssertEqual(blocks, 151)
        XCTAssertEqual(sink.inner.bytes.count, 151 * 128)
        // Output is written per block, never as one whole-stream buffer.
        XCTAssertEqual(sink.largestWrite, 128)

        for concurrency in [1, 2, 3] {
            var cSource = TrickleSource(inner: RSAArrayByteSource(sink.inner.bytes))
            var out = RSAArrayByteSink()
            XCTAssertEqual(
                try RSAPKCS1v15Chunking.decrypt(from: &cSource, to: &out, with: key, concurrency: concurrency), 151)
            XCTAssertEqual(out.bytes, plaintext, "concurrency \(concurrency)")
        }
    }

    func testStreaming_PipeWithShortTailFailsBeforeDecryptingThatBatch() throws {
        let key = try TestKeys.generated(bits: 1024)
        let ciphertext = try RSAPKCS1v15Chunking.encrypt(message(117 * 3), with: key.publicKey) + [1, 2, 3]
        var source = TrickleSource(inner: RSAArrayByteSource(ciphertext))
        var sink = RSAArrayByteSink()
        XCTAssertThrowsError(try RSAPKCS1v15Chunking.decrypt(from: &source, to: &sink, with: key)) { error in
            XCTAssertEqual(error as? RSAError, .ciphertextLengthInvalid(byteCount: 3 * 128 + 3, blockSize: 128))
        }
        XCTAssertEqual(sink.bytes, [], "nothing decrypted from the batch holding the short tail")
    }

    func testDecrypt_CorruptBlockFailsOpaquely() throws {
        let key = try TestKeys.generated(bits: 1024)
        var ciphertext = try RSAPKCS1v15Chunking.encrypt(message(1000), with: key.publicKey)
        ciphertext[128 * 3 + 50] ^= 0x01
        XCTAssertThrowsError(try RSAPKCS1v15Chunking.decrypt(ciphertext, with: key)) { error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed)
        }
    }

    func testFileDescriptorStreams_RoundTripThroughFiles() throws {
        let key = try TestKeys.generated(bits: 2048)
        let dir = TestKeys.scratch
        let plainURL = dir.appendingPathComponent("plain-\(UUID().uuidString)")
        let cipherURL = dir.appendingPathComponent("cipher-\(UUID().uuidString)")
        let plaintext = message(100_000)
        try Data(plaintext).write(to: plainURL)
        _ = FileManager.default.createFile(atPath: cipherURL.path, contents: nil)

        let input = open(plainURL.path, O_RDONLY)
        let output = open(cipherURL.path, O_WRONLY | O_TRUNC)
        defer { close(input); close(output) }
        var source = RSAFileDescriptorSource(fileDescriptor: input)
        XCTAssertEqual(source.remainingByteCount, 100_000)
        var sink = RSAFileDescriptorSink(fileDescriptor: output)
        let blocks = try RSAPKCS1v15Chunking.encrypt(from: &source, to: &sink, with: key.publicKey)
        XCTAssertEqual(blocks, UInt64((100_000 + 244) / 245))
        let ciphertext = [UInt8](try Data(contentsOf: cipherURL))
        XCTAssertEqual(ciphertext.count, Int(blocks) * 256)
        XCTAssertEqual(try RSAPKCS1v15Chunking.decrypt(ciphertext, with: key), plaintext)

        // A truncated file is rejected from its size before any private-key operation.
        try Data(ciphertext.dropLast(7)).write(to: cipherURL)
        let truncated = open(cipherURL.path, O_RDONLY)
        defer { close(truncated) }
        var tSource = RSAFileDescriptorSource(fileDescriptor: truncated)
        var sinkMemory = RSAArrayByteSink()
        XCTAssertThrowsError(try RSAPKCS1v15Chunking.decrypt(from: &tSource, to: &sinkMemory, with: key)) { error in
            XCTAssertEqual(
                error as? RSAError, .ciphertextLengthInvalid(byteCount: ciphertext.count - 7, blockSize: 256))
        }
    }
}
