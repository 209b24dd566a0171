import XCTest
import RSAKit
@testable import RSAKitCore

/// I2OSP/OS2IP, RSAEP/RSADP and one-block RSAES-PKCS1-v1_5.
final class PrimitivesTests: XCTestCase {
    func testI2OSP_ExactLengthWithLeadingZeros() throws {
        XCTAssertEqual(try BigNumber(0).bytes(count: 4), [0, 0, 0, 0])
        XCTAssertEqual(try BigNumber(0).bytes(count: 0), [])
        XCTAssertEqual(try BigNumber(1).bytes(count: 3), [0, 0, 1])
        XCTAssertEqual(try BigNumber(0x0102_0304).bytes(count: 4), [1, 2, 3, 4])
        XCTAssertEqual(try BigNumber(0x0102_0304).bytes(count: 9), [0, 0, 0, 0, 0, 1, 2, 3, 4])
        let wide = BigNumber(bytes: [0xAB] + [UInt8](repeating: 0, count: 20) + [0xCD])
        XCTAssertEqual(try wide.bytes(count: 24), [0, 0, 0xAB] + [UInt8](repeating: 0, count: 20) + [0xCD])
    }

    func testI2OSP_IntegerTooLargeIsAnError() {
        XCTAssertThrowsError(try BigNumber(256).bytes(count: 1)) { error in
            XCTAssertEqual(error as? RSAError, .integerTooLarge(byteCount: 1))
        }
        XCTAssertThrowsError(try BigNumber(1).bytes(count: 0))
        XCTAssertThrowsError(try (BigNumber(0) - 1).bytes(count: 8), "negative")
    }

    func testOS2IP_IgnoresLeadingZeros() {
        XCTAssertEqual(BigNumber(bytes: [0, 0, 1, 0]).uintValue, 256)
        XCTAssertEqual(BigNumber(bytes: []).uintValue, 0)
        XCTAssertEqual(BigNumber(bytes: [0xFF, 0xFF]).uintValue, 65535)
    }

    func testRSAEP_RangeCheck() throws {
        let key = try TestKeys.generated(bits: 1024).publicKey
        XCTAssertEqual(try key.rsaep([0]), [UInt8](repeating: 0, count: 128))
        XCTAssertEqual(try key.rsaep([1]), [UInt8](repeating: 0, count: 127) + [1])
        XCTAssertThrowsError(try key.rsaep(key.modulus)) { error in
            XCTAssertEqual(error as? RSAError, .messageRepresentativeOutOfRange)
        }
        XCTAssertThrowsError(try key.rsaep([UInt8](repeating: 0xFF, count: 129)))
    }

    func testRSADP_InvertsRSAEPAndRejectsOutOfRange() throws {
        let key = try TestKeys.generated(bits: 1024)
        let n = BigNumber(bytes: key.modulus)
        for value in [
            BigNumber(2), BigNumber(65537), n - 1, n - 2, BigNumber(bytes: [UInt8](repeating: 0x7F, count: 120))
        ] {
            let m = try value.bytes(count: 128)
            let c = try key.publicKey.rsaep(m)
            XCTAssertEqual(c.count, 128)
            XCTAssertEqual(try key.rsadp(c), m)
        }
        // c = 0 decrypts to 0 (RSADP is defined on 0 <= c < n).
        XCTAssertEqual(try key.rsadp([0]), [UInt8](repeating: 0, count: 128))
        // c = n and c > n are out of range, reported like every decryption failure.
        for c in [key.modulus, (n + 1).minimalBytes, [UInt8](repeating: 0xFF, count: 128)] {
            XCTAssertThrowsError(try key.rsadp(c)) { error in
                XCTAssertEqual(error as? RSAError, .decryptionFailed)
            }
        }
    }

    func testRSADP_BlindingPairStaysValidAcrossManyOperations() throws {
        // More operations than one blinding value serves, so the refresh path runs too.
        let key = try TestKeys.generated(bits: 1024)
        for i in 0..<(3 * BlindingPair.usesPerRandomValue + 5) {
            let m = try BigNumber(UInt(i + 2)).bytes(count: 128)
            XCTAssertEqual(try key.rsadp(try key.publicKey.rsaep(m)), m, "operation \(i)")
        }
    }

    func testDecrypt_RejectsWrongLengthCiphertext() throws {
        let key = try TestKeys.generated(bits: 1024)
        let c = try key.publicKey.encrypt([1, 2, 3])
        for bad in [Array(c.dropFirst()), [0] + c, [], c + [0]] {
            XCTAssertThrowsError(try key.decrypt(bad)) { error in
                XCTAssertEqual(error as? RSAError, .decryptionFailed)
            }
        }
    }

    func testDecrypt_RejectsCiphertextEqualToModulus() throws {
        let key = try TestKeys.generated(bits: 1024)
        XCTAssertThrowsError(try key.decrypt(key.modulus)) { error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed)
        }
    }

    func testEncrypt_EveryCiphertextIsExactlyKBytes() throws {
        // 2000 encryptions under one key: about 1 in 256 has a leading zero octet, which
        // GMP's own export would drop.
        let key = try TestKeys.generated(bits: 1024).publicKey
        var leadingZeros = 0
        for i in 0..<2000 {
            let c = try key.encrypt([UInt8(truncatingIfNeeded: i)])
            XCTAssertEqual(c.count, 128)
            if c[0] == 0 { leadingZeros += 1 }
        }
        print("2000 encryptions, all 128 bytes; \(leadingZeros) began with 0x00")
    }

    func testEncrypt_LeadingZeroCiphertextDecrypts() throws {
        let key = try TestKeys.generated(bits: 1024)
        var found = false
        for i in 0..<5000 where !found {
            let message = [UInt8(truncatingIfNeeded: i), 1]
            let c = try key.publicKey.encrypt(message)
            if c[0] == 0 {
                found = true
                XCTAssertEqual(c.count, 128)
                XCTAssertEqual(try key.decrypt(c), message)
            }
        }
        XCTAssertTrue(found, "no ciphertext with a leading zero octet in 5000 tries")
    }

    func testEncrypt_MessageTooLong() throws {
        let key = try TestKeys.generated(bits: 1024).publicKey
        XCTAssertThrowsError(try key.encrypt([UInt8](repeating: 0, count: 118))) { error in
            XCTAssertEqual(error as? RSAError, .messageTooLong(byteCount: 118, maximum: 117))
        }
    }
}
