import XCTest
import RSAKit

/// EME-PKCS1-v1_5 on hand-built encoded messages, no keys (RFC 8017 §7.2).
final class PaddingTests: XCTestCase {
    let k = 128

    /// EM = 0x00 || 0x02 || PS || 0x00 || M with PS = 0x5A repeated.
    func makeEM(message: [UInt8]) -> [UInt8] {
        let ps = [UInt8](repeating: 0x5A, count: k - message.count - 3)
        return [0x00, 0x02] + ps + [0x00] + message
    }

    func assertOpaqueFailure(_ em: [UInt8], _ what: String, line: UInt = #line) {
        XCTAssertThrowsError(try RSAHazmat.EMEPKCS1v15.decode(em), what, line: line) { error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed, what, line: line)
        }
    }

    func testDecode_AcceptsWellFormedMessages() throws {
        for length in [0, 1, 16, k - 11] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
            XCTAssertEqual(try RSAHazmat.EMEPKCS1v15.decode(makeEM(message: message)), message, "length \(length)")
        }
        // A message that itself contains zero bytes: only the first 0x00 after PS separates.
        let withZeros: [UInt8] = [0, 0, 1, 0]
        XCTAssertEqual(try RSAHazmat.EMEPKCS1v15.decode(makeEM(message: withZeros)), withZeros)
    }

    func testDecode_RejectsNonZeroFirstByte() {
        var em = makeEM(message: [1, 2, 3]); em[0] = 0x01
        assertOpaqueFailure(em, "byte 0 = 0x01")
    }

    func testDecode_RejectsWrongBlockType() {
        for type: UInt8 in [0x00, 0x01, 0x03, 0xFF] {
            var em = makeEM(message: [1, 2, 3]); em[1] = type
            assertOpaqueFailure(em, "byte 1 = \(type)")
        }
    }

    func testDecode_RejectsZeroInsidePS() {
        // A zero at PS position 0...7 makes PS shorter than 8 octets.
        for position in 0..<8 {
            var em = makeEM(message: [1, 2, 3]); em[2 + position] = 0x00
            assertOpaqueFailure(em, "zero at PS[\(position)]")
        }
        // A zero at PS[8] leaves 8 octets of PS: valid, and the message gains the rest.
        var em = makeEM(message: [1, 2, 3]); em[10] = 0x00
        XCTAssertEqual(try RSAHazmat.EMEPKCS1v15.decode(em).count, k - 11)
    }

    func testDecode_RejectsShortPS() {
        // Exactly 7 octets of PS: M is k - 10 bytes long.
        let message = [UInt8](repeating: 0x41, count: k - 10)
        let em: [UInt8] = [0x00, 0x02] + [UInt8](repeating: 0x5A, count: 7) + [0x00] + message
        XCTAssertEqual(em.count, k)
        assertOpaqueFailure(em, "PS of 7 bytes")
    }

    func testDecode_RejectsMissingSeparator() {
        let em: [UInt8] = [0x00, 0x02] + [UInt8](repeating: 0x5A, count: k - 2)
        assertOpaqueFailure(em, "no 0x00 separator")
    }

    func testDecode_RejectsTooShortEM() {
        assertOpaqueFailure([0x00, 0x02, 1, 1, 1, 1, 1, 1, 1, 1], "10-byte EM")
        assertOpaqueFailure([], "empty EM")
    }

    func testEncode_LayoutAndNonZeroPadding() throws {
        let random = DeterministicRandomSource(seed: 42)
        for length in [0, 1, 50, k - 11] {
            let message = [UInt8](repeating: 0xEE, count: length)
            for _ in 0..<50 {
                let em = try RSAHazmat.EMEPKCS1v15.encode(message, encodedLength: k, random: random)
                XCTAssertEqual(em.count, k)
                XCTAssertEqual(em[0], 0x00)
                XCTAssertEqual(em[1], 0x02)
                let psLength = k - length - 3
                XCTAssertGreaterThanOrEqual(psLength, 8)
                XCTAssertFalse(em[2..<(2 + psLength)].contains(0), "PS must be non-zero")
                XCTAssertEqual(em[2 + psLength], 0x00)
                XCTAssertEqual(Array(em[(3 + psLength)...]), message)
                XCTAssertEqual(try RSAHazmat.EMEPKCS1v15.decode(em), message)
            }
        }
    }

    /// A source that yields zeros half of the time, to exercise the redraw of zero PS octets.
    final class ZeroHeavySource: RSARandomSource, @unchecked Sendable {
        var counter: UInt8 = 0
        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            for i in buffer.indices { counter &+= 1; buffer[i] = counter % 2 == 0 ? 0 : counter }
        }
    }

    func testEncode_RedrawsZeroPaddingBytes() throws {
        let em = try RSAHazmat.EMEPKCS1v15.encode([9, 9], encodedLength: k, random: ZeroHeavySource())
        XCTAssertFalse(em[2..<(k - 3)].contains(0))
        XCTAssertEqual(try RSAHazmat.EMEPKCS1v15.decode(em), [9, 9])
    }

    func testEncode_RejectsMessageTooLong() {
        XCTAssertThrowsError(try RSAHazmat.EMEPKCS1v15.encode([UInt8](repeating: 1, count: k - 10), encodedLength: k)) {
            error in
            XCTAssertEqual(error as? RSAError, .messageTooLong(byteCount: k - 10, maximum: k - 11))
            XCTAssertEqual("\(error)", "message too long: \(k - 10) bytes given, at most \(k - 11) fit in one block")
        }
    }
}
