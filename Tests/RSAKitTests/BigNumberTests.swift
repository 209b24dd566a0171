import XCTest
import RSAKit
@testable import RSAKitCore
@testable import RSAKitPKI
@testable import RSAKitKeychain

/// The BigInt layer: OS2IP / I2OSP (RFC 8017 §4) and the cached-Montgomery public
/// exponentiation, each checked against an independent computation.
final class BigNumberTests: XCTestCase {
    /// A seeded xorshift generator: reproducible inputs for these tests only.
    private struct SeededBytes {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return state
        }
        mutating func bytes(_ count: Int) -> [UInt8] {
            (0..<count).map { _ in UInt8(truncatingIfNeeded: next() >> 24) }
        }
    }

    /// base^e mod m by square-and-multiply over mpz_mul and mpz_mod only: no powm, no
    /// Montgomery arithmetic, so it cannot share a bug with the code under test.
    private func referencePow(_ base: BigNumber, _ e: UInt64, _ m: BigNumber) -> BigNumber {
        var result = BigNumber(1).mod(m)
        var square = base.mod(m)
        var bits = e
        while bits > 0 {
            if bits & 1 == 1 { result = (result * square).mod(m) }
            square = (square * square).mod(m)
            bits >>= 1
        }
        return result
    }

    /// The integer value of big-endian bytes computed with + and * only.
    private func referenceValue(_ bytes: [UInt8]) -> BigNumber {
        var value = BigNumber(0)
        for byte in bytes { value = value * 256 + UInt(byte) }
        return value
    }

    func testOS2IP_MatchesPositionalValueForEveryLengthUpTo80() {
        var random = SeededBytes(state: 0x1234_5678_9abc_def1)
        for length in 0...80 {
            var bytes = random.bytes(length)
            if length > 2 { bytes[0] = 0; bytes[1] = 0 }  // leading zeros are ignored
            XCTAssertEqual(BigNumber(bytes: bytes), referenceValue(bytes), "length \(length)")
            XCTAssertEqual(BigNumber(bytes: bytes[...]), referenceValue(bytes), "slice, length \(length)")
        }
    }

    func testI2OSP_RoundTripsAtEveryLengthAndPadsWithZeros() throws {
        var random = SeededBytes(state: 0x0bad_cafe_f00d_0001)
        for length in 1...80 {
            var bytes = random.bytes(length)
            bytes[0] |= 0x80
            let value = referenceValue(bytes)
            XCTAssertEqual(try value.bytes(count: length), bytes, "length \(length)")
            // Wider outputs are left-padded with zeros.
            XCTAssertEqual(try value.bytes(count: length + 9), [UInt8](repeating: 0, count: 9) + bytes)
            // One byte too short is "integer too large".
            XCTAssertThrowsError(try value.bytes(count: length - 1)) { error in
                XCTAssertEqual(error as? RSAError, .integerTooLarge(byteCount: length - 1))
            }
        }
        XCTAssertEqual(try BigNumber(0).bytes(count: 5), [0, 0, 0, 0, 0])
        XCTAssertEqual(try BigNumber(0).bytes(count: 0), [])
    }

    func testMontgomeryPow_EqualsSquareAndMultiplyForManySizesAndExponents() throws {
        var random = SeededBytes(state: 0x5eed_0000_0000_0042)
        let exponents: [UInt64] = [1, 2, 3, 17, 65537, 65536, 0x8000_0000_0000_0001, .max]
        for byteCount in [1, 7, 8, 9, 16, 31, 64, 128, 129, 256, 384, 512] {
            var nBytes = random.bytes(byteCount)
            nBytes[0] |= 0x80
            nBytes[byteCount - 1] |= 1
            let n = BigNumber(bytes: nBytes)
            let modulus = try XCTUnwrap(MontgomeryModulus(n), "odd modulus of \(byteCount) bytes")
            let nMinus1 = n - 1
            let bases = [
                BigNumber(0), BigNumber(1), nMinus1, BigNumber(bytes: random.bytes(byteCount)).mod(n),
                BigNumber(bytes: random.bytes(byteCount / 2 + 1)).mod(n)
            ]
            for base in bases {
                for e in exponents {
                    let exponent = BigNumber(UInt(e))
                    let got = try XCTUnwrap(modulus.powVarTime(base, exponent))
                    XCTAssertEqual(got, referencePow(base, e, n), "\(byteCount) bytes, e = \(e)")
                    XCTAssertEqual(base.powModVarTime(exponent, n), got)
                }
            }
        }
    }

    func testMontgomeryPow_RefusesWhatItCannotDoAndPowModFallsBack() throws {
        let n = BigNumber(bytes: [0xC5, 0x3A, 0x91, 0x07, 0x33, 0x21, 0x0F, 0xED, 0x11, 0x05])
        let modulus = try XCTUnwrap(MontgomeryModulus(n))
        XCTAssertNil(modulus.powVarTime(n, BigNumber(3)), "base = n")
        XCTAssertNil(modulus.powVarTime(n + 5, BigNumber(3)), "base > n")
        XCTAssertNil(modulus.powVarTime(BigNumber(7), BigNumber(0)), "e = 0")
        let bigExponent = BigNumber.powerOfTwo(64) + 1
        XCTAssertNil(modulus.powVarTime(BigNumber(7), bigExponent), "65-bit e")
        XCTAssertNil(MontgomeryModulus(BigNumber(1)))
        XCTAssertNil(MontgomeryModulus(BigNumber(0)))
        XCTAssertNil(MontgomeryModulus(n + 1), "even modulus")
        // powModVarTime gives the same values through mpz_powm where the fast path refuses:
        // base above n, an even modulus, a 65-bit exponent (2^64 + 1 = (2^32)^2 + 1).
        XCTAssertEqual((n + 5).powModVarTime(BigNumber(3), n), referencePow(BigNumber(5), 3, n))
        let even = n + 1
        XCTAssertEqual(
            BigNumber(12345).powModVarTime(BigNumber(65537), even), referencePow(BigNumber(12345), 65537, even))
        let b = BigNumber(987_654_321)
        let expected = (referencePow(referencePow(b, 1 << 32, n), 1 << 32, n) * b).mod(n)
        XCTAssertEqual(b.powModVarTime(bigExponent, n), expected)
    }

    func testMontgomeryCache_IsRebuiltAfterTheModulusChanges() throws {
        let n = BigNumber(bytes: [
            0xF1, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x01
        ])
        let base = BigNumber(bytes: [0x42, 0x42, 0x42])
        XCTAssertEqual(base.powModVarTime(BigNumber(65537), n), referencePow(base, 65537, n))
        XCTAssertNotNil(n.montgomery)
        // Changing n in place must not leave the old constants behind.
        n.setBit(140)
        XCTAssertEqual(base.powModVarTime(BigNumber(65537), n), referencePow(base, 65537, n))
        let other = BigNumber(bytes: [0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xC5])
        n.squareMod(other)
        if n.isOdd, n.compare(base) > 0 {
            XCTAssertEqual(base.powModVarTime(BigNumber(65537), n), referencePow(base, 65537, n))
        }
        n.multiplyMod(by: BigNumber(3), other)
        if n.isOdd, n.compare(base) > 0 {
            XCTAssertEqual(base.powModVarTime(BigNumber(17), n), referencePow(base, 17, n))
        }
    }

    func testMontgomeryCache_IsSafeToShareAcrossThreads() throws {
        var random = SeededBytes(state: 77)
        var nBytes = random.bytes(128)
        nBytes[0] |= 0x80; nBytes[127] |= 1
        let n = BigNumber(bytes: nBytes)
        let bases = (0..<32).map { _ in BigNumber(bytes: random.bytes(127)) }
        let expected = bases.map { referencePow($0, 65537, n) }
        let mismatches = Atomicish()
        DispatchQueue.concurrentPerform(iterations: 32) { i in
            // Every thread may be the first to build the constants.
            if bases[i].powModVarTime(BigNumber(65537), n) != expected[i] { mismatches.increment() }
        }
        XCTAssertEqual(mismatches.value, 0)
    }

    func testRSAEPAndRSADP_RoundTripThroughTheCachedModulus() throws {
        let key = try RSAPrivateKey.generate(bitCount: 1024)
        var random = SeededBytes(state: 99)
        for _ in 0..<8 {
            var m = random.bytes(key.modulusByteCount)
            m[0] = 0  // below n
            let c = try key.publicKey.rsaep(m)
            XCTAssertEqual(BigNumber(bytes: c), referencePow(BigNumber(bytes: m), 65537, key.publicKey.n))
            XCTAssertEqual(try key.rsadp(c), m)
        }
    }
}

/// A counter several threads may bump.
private final class Atomicish: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
