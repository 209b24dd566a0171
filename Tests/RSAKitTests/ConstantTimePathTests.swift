import Foundation
import XCTest
import RSAKit
@testable import RSAKitCore
@testable import RSAKitPKI
@testable import RSAKitKeychain

/// Differential tests of the constant-time private path (rsakit_secret.c, GMP's mpn_sec_*
/// layer) against the variable-time mpz reference (the pre-rewrite path) and against
/// c^d mod n computed directly with mpz_powm, on random and edge inputs.
final class ConstantTimePathTests: XCTestCase {
    /// c^d mod n on plain mpz (no CRT): the independent truth.
    static func plainRSADP(_ key: RSAPrivateKey, _ c: [UInt8]) throws -> [UInt8] {
        let n = key.storage.n
        let m = BigNumber(bytes: c).powModVarTime(key.storage.d, n)
        return try m.bytes(count: key.modulusByteCount)
    }

    /// Edge inputs 0, 1, 2, n - 1, n - 2, just below n (n minus small values and
    /// n with its low limb cleared), all-ones low limbs, then `randomInputs` random c < n.
    static func inputs(for key: RSAPrivateKey, randomInputs: Int, seed: UInt64 = 1) throws -> [[UInt8]] {
        let n = key.storage.n, k = key.modulusByteCount
        var values: [BigNumber] = [
            BigNumber(0), BigNumber(1), BigNumber(2), n - 1, n - 2, n - 0xFFFF,
            (n.shiftedRight(64)).shiftedLeft(64) - 1,
            BigNumber.powerOfTwo(64 * 4) - 1,
            n.shiftedRight(1)
        ]
        let random = DeterministicRandomSource(seed: seed)
        for _ in 0..<randomInputs {
            values.append(BlindingPair.randomResidue(below: n, random: random))
        }
        return try values.map { try $0.bytes(count: k) }
    }

    static func assertAgreesWithReference(
        _ key: RSAPrivateKey, randomInputs: Int,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let random = DeterministicRandomSource(seed: 77)
        for (i, c) in try inputs(for: key, randomInputs: randomInputs).enumerated() {
            let expected = try plainRSADP(key, c)
            XCTAssertEqual(try key.rsadp(c, random: random), expected, "rsadp input \(i)", file: file, line: line)
            XCTAssertEqual(
                try key.rsadpReferenceVarTime(c, random: random), expected, "mpz reference input \(i)", file: file,
                line: line)
            let raw = key.storage.secret.unprotectedCRT(c)
            XCTAssertEqual(raw.status, .ok, file: file, line: line)
            XCTAssertEqual(raw.output, expected, "unprotected CRT input \(i)", file: file, line: line)
            XCTAssertEqual(
                try key.storage.crtExponentiationReferenceVarTime(BigNumber(bytes: c)).bytes(
                    count: key.modulusByteCount),
                expected, file: file, line: line)
        }
    }

    func testConstantTimePath_AgreesWithMPZOnEdgeAndRandomInputs() throws {
        for bits in [1024, 2048] {
            try ConstantTimePathTests.assertAgreesWithReference(try TestKeys.generated(bits: bits), randomInputs: 25)
        }
        try ConstantTimePathTests.assertAgreesWithReference(
            try TestKeys.generated(bits: 1024, exponent: 3), randomInputs: 10)
    }

    func testConstantTimePath_OpenSSLKeysIncludingUnequalPrimeSizes() throws {
        // openssl keys of odd sizes give primes of different limb counts (p, q of 513/512 bits...).
        for bits in [1025, 2049, 3072] {
            let (_, key) = try TestKeys.openssl(bits: bits)
            try ConstantTimePathTests.assertAgreesWithReference(key, randomInputs: 8)
        }
    }

    func testRSADP_RejectsValuesAtAndAboveModulus() throws {
        let key = try TestKeys.generated(bits: 1024)
        let n = key.storage.n
        for value in [n, n + 1, BigNumber.powerOfTwo(1024) - 1] {
            XCTAssertThrowsError(try key.rsadp(try value.bytes(count: 128))) { error in
                XCTAssertEqual(error as? RSAError, .decryptionFailed)
            }
            XCTAssertEqual(key.storage.secret.unprotectedCRT(try value.bytes(count: 128)).status, .outOfRange)
        }
    }

    func testBatch_EightBlocksEachWithItsOwnPair_MatchSingleCalls() throws {
        let key = try TestKeys.generated(bits: 2048)
        let inputs = try ConstantTimePathTests.inputs(for: key, randomInputs: 8, seed: 9)
        for count in [1, 3, 8] {
            let batch = Array(inputs.suffix(count))
            let results = try key.rsadp(batch: batch, random: SystemRandomSource())
            XCTAssertEqual(results.count, count)
            for (c, m) in zip(batch, results) {
                XCTAssertEqual(m, try ConstantTimePathTests.plainRSADP(key, c))
            }
        }
        // Seven fixed lanes and one varying: each lane independent.
        let fixed = Array(inputs.prefix(7))
        for varying in inputs.suffix(4) {
            let results = try key.rsadp(batch: fixed + [varying], random: SystemRandomSource())
            XCTAssertEqual(results.last, try ConstantTimePathTests.plainRSADP(key, varying))
            for (c, m) in zip(fixed, results) { XCTAssertEqual(m, try ConstantTimePathTests.plainRSADP(key, c)) }
        }
        // One lane out of range fails the whole batch opaquely.
        var bad = fixed
        bad.append(try (key.storage.n + 1).bytes(count: key.modulusByteCount))
        XCTAssertThrowsError(try key.rsadp(batch: bad, random: SystemRandomSource())) { error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed)
        }
    }

    func testBlinding_PairsStayValidAcrossRefreshesAndThreads() throws {
        let key = try TestKeys.generated(bits: 1024)
        let inputs = try ConstantTimePathTests.inputs(for: key, randomInputs: 4, seed: 3)
        let expected = try inputs.map { try ConstantTimePathTests.plainRSADP(key, $0) }
        // More than three refreshes (a fresh r every 32 uses), from four threads at once.
        let failures = LockedCounter()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for i in 0..<(BlindingPair.usesPerRandomValue * 3 + 5) {
                let j = i % inputs.count
                if (try? key.rsadp(inputs[j])) != expected[j] { failures.increment() }
            }
        }
        XCTAssertEqual(failures.value, 0)
    }

    func testCheck_AFaultyKernelIsCaughtBeforeAnythingIsReturned() throws {
        // A kernel that returns wrong residues (a simulated fault in one CRT half): the
        // re-encryption check must refuse to return the result.
        let (path, _) = try TestKeys.openssl(bits: 1024)
        let key = try RSAPrivateKey(pemRepresentation: try String(contentsOfFile: path, encoding: .utf8))
        key.storage.secret.attachFaultyKernelForTests()
        let c = try ConstantTimePathTests.inputs(for: key, randomInputs: 1)[9]
        XCTAssertThrowsError(try key.rsadp(c)) { error in
            guard case .internalError? = error as? RSAError else { return XCTFail("\(error)") }
        }
    }
}

final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
