import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitCore

/// Key construction checks, in the manner of BoringSSL's RSA_check_key tests: perturb one
/// component at a time, expect the specific rejection, restore.
final class KeyValidationTests: XCTestCase {
    struct Components {
        var n, e, d, p, q, dP, dQ, qInv: [UInt8]
        init(_ key: RSAPrivateKey) {
            n = key.modulus; e = key.publicExponent; d = key.privateExponent
            p = key.prime1; q = key.prime2; dP = key.exponent1; dQ = key.exponent2; qInv = key.coefficient
        }
        func build() throws -> RSAPrivateKey {
            try RSAPrivateKey(
                modulus: n, publicExponent: e, privateExponent: d, prime1: p, prime2: q,
                exponent1: dP, exponent2: dQ, coefficient: qInv)
        }
    }

    /// Add `delta` (+1 or -1) to a big-endian magnitude.
    func adjust(_ bytes: [UInt8], by delta: Int) -> [UInt8] {
        let value = BigNumber(bytes: bytes)
        return (delta > 0 ? value + UInt(delta) : value - UInt(-delta)).minimalBytes
    }

    func assertRejected(_ c: Components, _ expected: KeyValidationFailure, _ what: String, line: UInt = #line) {
        XCTAssertThrowsError(try c.build(), what, line: line) { error in
            XCTAssertEqual(error as? RSAError, .invalidKey(expected), what, line: line)
        }
    }

    func testPrivateKey_PerturbingEachComponentIsRejected() throws {
        let good = Components(try TestKeys.generated(bits: 1024))
        XCTAssertNoThrow(try good.build())
        for delta in [1, -1] {
            var c = good
            c.n = adjust(good.n, by: delta)
            // n +/- 1 is even.
            assertRejected(c, .modulusEven, "n\(delta > 0 ? "+" : "-")1")
            c = good; c.e = adjust(good.e, by: delta)
            assertRejected(c, .publicExponentEven, "e\(delta)")
            c = good; c.d = adjust(good.d, by: delta)
            assertRejected(c, .privateExponentMismatch, "d\(delta)")
            c = good; c.p = adjust(good.p, by: delta)
            assertRejected(c, .primeProductMismatch, "p\(delta)")
            c = good; c.q = adjust(good.q, by: delta)
            assertRejected(c, .primeProductMismatch, "q\(delta)")
            c = good; c.dP = adjust(good.dP, by: delta)
            assertRejected(c, .firstCRTExponentMismatch, "dP\(delta)")
            c = good; c.dQ = adjust(good.dQ, by: delta)
            assertRejected(c, .secondCRTExponentMismatch, "dQ\(delta)")
            c = good; c.qInv = adjust(good.qInv, by: delta)
            assertRejected(c, .crtCoefficientMismatch, "qInv\(delta)")
        }
        // e changed by 2 stays odd but no longer matches d.
        var c = good; c.e = adjust(adjust(good.e, by: 1), by: 1)
        assertRejected(c, .privateExponentMismatch, "e+2")
        // Swapped primes: qInv no longer matches.
        c = good; c.p = good.q; c.q = good.p
        XCTAssertThrowsError(try c.build())
        // Equal primes.
        c = good; c.q = good.p
        assertRejected(c, .primesEqual, "p = q")
        // p = 1.
        c = good; c.p = [1]
        assertRejected(c, .primeTooSmall, "p = 1")
        // d = 0.
        c = good; c.d = []
        assertRejected(c, .privateExponentMismatch, "d = 0")
    }

    func testPublicKey_Validation() throws {
        let key = try TestKeys.generated(bits: 1024)
        let n = key.modulus
        XCTAssertNoThrow(try RSAPublicKey(modulus: n, publicExponent: [1, 0, 1]))
        let cases: [([UInt8], [UInt8], KeyValidationFailure)] = [
            (adjust(n, by: 1), [1, 0, 1], .modulusEven),
            ([1], [3], .modulusTooSmall),
            ([], [3], .modulusTooSmall),
            (n, [1], .publicExponentTooSmall),
            (n, [], .publicExponentTooSmall),
            (n, [2], .publicExponentTooSmall),
            (n, [4], .publicExponentEven),
            (n, [1, 0, 0], .publicExponentEven),
            ([0x0F], [0x11], .publicExponentNotLessThanModulus)
        ]
        for (modulus, exponent, failure) in cases {
            XCTAssertThrowsError(try RSAPublicKey(modulus: modulus, publicExponent: exponent), "\(failure)") { error in
                XCTAssertEqual(error as? RSAError, .invalidKey(failure))
            }
        }
    }

    func testPublicKey_LeadingZeroModulusIsTheSameKey() throws {
        let key = try TestKeys.generated(bits: 1024)
        let plain = try RSAPublicKey(modulus: key.modulus, publicExponent: key.publicExponent)
        let padded = try RSAPublicKey(modulus: [0, 0] + key.modulus, publicExponent: [0] + key.publicExponent)
        XCTAssertEqual(plain, padded)
        XCTAssertEqual(padded.modulusByteCount, 128)
        XCTAssertEqual(padded.modulusBitCount, 1024)
        XCTAssertEqual(padded.maximumMessageByteCount, 117)
        XCTAssertEqual(padded.modulus, key.modulus)
    }

    func testKeySizes_OddBitLengthsFromOpenSSL() throws {
        _ = try OpenSSL.require()
        // NOTE: OpenSSL 3.0's genpkey may return a key one bit longer or shorter than an odd
        // size asks for (2049 gives 2048 or 2050); k is checked against the size OpenSSL reports.
        for bits in [2047, 2049, 3000] {
            let (path, key) = try TestKeys.openssl(bits: bits)
            let header = String(decoding: try OpenSSL.run(["pkey", "-in", path, "-text", "-noout"]), as: UTF8.self)
            let reported = Int(header.split(separator: "(")[1].split(separator: " ")[0])!
            XCTAssertEqual(key.modulusBitCount, reported)
            XCTAssertEqual(key.modulusByteCount, (reported + 7) / 8)
            XCTAssertEqual(key.maximumMessageByteCount, (reported + 7) / 8 - 11)
            let c = try key.publicKey.encrypt([7, 7, 7])
            XCTAssertEqual(c.count, key.modulusByteCount)
            XCTAssertEqual(try key.decrypt(c), [7, 7, 7])
        }
        // Exact odd sizes from our own generator.
        for (bits, k) in [(2047, 256), (2049, 257)] {
            let key = try TestKeys.generated(bits: bits)
            XCTAssertEqual(key.modulusBitCount, bits)
            XCTAssertEqual(key.modulusByteCount, k)
            XCTAssertEqual(key.maximumMessageByteCount, k - 11)
        }
        for e in [3, 17] {
            let key = try TestKeys.openssl(bits: 2048, exponent: e).key
            XCTAssertEqual(key.publicExponent, [UInt8(e)])
            let c = try key.publicKey.encrypt([1, 2, 3])
            XCTAssertEqual(try key.decrypt(c), [1, 2, 3])
        }
    }
}
