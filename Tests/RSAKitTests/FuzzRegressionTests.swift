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
    /// but encrypt never writes it (the same message re-encrypts to one block fewer). The
    /// fixture is a version 1 container (60-byte header, 17-byte frames, k - 28 payload bytes);
    /// version 2 refuses the same shape by the same rule.
    func testContainer_RejectsEmptyFinalBlockAfterFullOne() throws {
        let key = try fuzzKey()
        let container = Array(try fixture("FuzzContainer/empty-final-block-after-full").dropFirst())  // mode byte
        let k = key.modulusByteCount
        XCTAssertEqual(container.count, 60 + 2 * k, "a version 1 header and two blocks")
        // The blocks themselves are sound: block 0 is full and not final, block 1 final and empty.
        let header = try RSAMessageContainer.Header(parsing: container)
        let frame0 = try key.decrypt(Array(container[60..<(60 + k)]))
        let frame1 = try key.decrypt(Array(container[(60 + k)...]))
        XCTAssertEqual(Array(frame0[0..<8]), Array(header.messageID[0..<8]))
        XCTAssertEqual(frame0[16], 0)
        XCTAssertEqual(frame0.count - 17, k - 28, "a full version 1 payload")
        XCTAssertEqual(Array(frame1[8..<16]), [0, 0, 0, 0, 0, 0, 0, 1])
        XCTAssertEqual(frame1[16], 1)
        XCTAssertEqual(frame1.count, 17)
        // The container as a whole is refused, with the one opaque error.
        var source = RSAArrayByteSource(Array(container[60...]))
        var sink = RSAArrayByteSink()
        XCTAssertThrowsError(try RSAMessageContainer.decrypt(header: header, from: &source, to: &sink, with: key)) { error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed)
        }
        // Block 0 alone, made final, is the canonical encoding of the same message: the
        // fixture's 512-bit key is too small for version 2 (k - 68 < 1), so the version 1 rule
        // is what this input exercises.
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

    /// FuzzX509: a certificate whose version INTEGER is 12. GnuTLS parses it and reports
    /// version 13 (its value plus one, as for v1-v3), which X509Certificate passed on although
    /// RFC 5280 §4.1.2.1 knows only v1-v3 and `version` promised 1, 2 or 3. The fixture is the
    /// fuzzer's input: the seed chain's openssl-made leaf, mutated (the version and a few other bytes).
    func testX509_RejectsVersionBeyondV3() throws {
        let der = try fixture("FuzzX509/version-13")
        XCTAssertEqual(Array(der[8..<13]), [0xA0, 0x03, 0x02, 0x01, 0x0C], "[0] EXPLICIT Version INTEGER 12")
        for input in [der, Array(PEMDocument.encode(der, label: "CERTIFICATE").utf8)] {
            XCTAssertThrowsError(try X509Certificate.certificates(from: input)) { error in
                guard case let .malformedCertificate(reason)? = error as? RSAError else {
                    return XCTFail("expected malformedCertificate, got \(error)")
                }
                XCTAssertTrue(reason.contains("v13"), reason)
            }
        }
        // The same bytes with version 2 (v3) are a certificate rsakit reads.
        var v3 = der
        v3[12] = 0x02
        let certificate = try X509Certificate(derRepresentation: v3)
        XCTAssertEqual(certificate.version, 3)
        XCTAssertEqual(certificate.subjectSummary, "www.example.com")
    }
}
