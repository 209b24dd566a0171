import Foundation
import XCTest
@testable import RSAKit

/// Inputs found by the fuzz harnesses (Fuzz/, scripts/fuzz.sh), kept as regression tests.
/// Each input lives under Tests/RSAKitTests/Fixtures/fuzz/<harness>/ (see the README there);
/// scripts/fuzz.sh also replays them, as seeds, through the harness that found them.
final class FuzzRegressionTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/fuzz")

    func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Self.fixtures.appendingPathComponent(name)))
    }

    func fuzzKey() throws -> RSAPrivateKey {
        try RSAPrivateKey(pemRepresentation: String(decoding: try fixture("fuzz-key.pem"), as: UTF8.self))
    }

    /// FuzzContainer: a full block followed by a final block with an empty payload decrypted,
    /// but encrypt never writes it (the same message re-encrypts to one block fewer).
    func testContainer_RejectsEmptyFinalBlockAfterFullOne() throws {
        let key = try fuzzKey()
        let container = Array(try fixture("FuzzContainer/empty-final-block-after-full").dropFirst())  // mode byte
        let k = key.modulusByteCount
        XCTAssertEqual(container.count, MessageContainer.headerByteCount + 2 * k)
        // The blocks themselves are sound: block 0 is full and not final, block 1 final and empty.
        let header = try MessageContainer.Header(parsing: container)
        let frame0 = try key.decrypt(Array(container[60..<(60 + k)]))
        let frame1 = try key.decrypt(Array(container[(60 + k)...]))
        XCTAssertEqual(Array(frame0[0..<8]), Array(header.messageID[0..<8]))
        XCTAssertEqual(frame0[16], 0)
        XCTAssertEqual(frame0.count - 17, MessageContainer.payloadByteCount(blockSize: k))
        XCTAssertEqual(Array(frame1[8..<16]), [0, 0, 0, 0, 0, 0, 0, 1])
        XCTAssertEqual(frame1[16], 1)
        XCTAssertEqual(frame1.count, 17)
        // The container as a whole is refused, with the one opaque error.
        var source = ArrayByteSource(Array(container[60...]))
        var sink = ArrayByteSink()
        XCTAssertThrowsError(try MessageContainer.decrypt(header: header, from: &source, to: &sink, with: key)) { error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed)
        }
        // While the canonical encoding of the same message (one full final block) decrypts.
        var plain = ArrayByteSource([UInt8](repeating: UInt8(ascii: "p"), count: MessageContainer.payloadByteCount(blockSize: k)))
        var encrypted = ArrayByteSink()
        XCTAssertEqual(try MessageContainer.encrypt(from: &plain, to: &encrypted, with: key.publicKey), 1)
        var again = ArrayByteSource(Array(encrypted.bytes[60...]))
        var out = ArrayByteSink()
        try MessageContainer.decrypt(header: try MessageContainer.Header(parsing: encrypted.bytes), from: &again, to: &out, with: key)
        XCTAssertEqual(out.bytes, Array(frame0[17...]))
    }

    /// FuzzPEM: carriage returns before the BEGIN line. The scanner trims them and finds the
    /// block, but the quick BEGIN-line test did not, so the file was diagnosed as broken framing.
    func testKeyFile_ReadsPEMWithCarriageReturnsBeforeBegin() throws {
        let bytes = try fixture("FuzzPEM/cr-before-begin-line")
        XCTAssertEqual(Array(bytes.prefix(3)), [0x0D, 0x0D, 0x0D])
        XCTAssertTrue(PEMDocument.containsBeginLine(bytes))
        let file = try RSAKeyFile(bytes: bytes)
        XCTAssertTrue(file.isPEM)
        XCTAssertEqual(file.format, .spki)
        XCTAssertEqual(file.publicKey, try fuzzKey().publicKey)
    }
}
