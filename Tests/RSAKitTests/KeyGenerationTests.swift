import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitCore
@testable import RSAKitPKI

/// FIPS 186-5 A.1.3 key generation.
final class KeyGenerationTests: XCTestCase {
    /// Check the properties A.1.3 / B.3.1 promise, from the key's public accessors.
    func assertFIPSProperties(_ key: RSAPrivateKey, bits: Int, e: UInt, line: UInt = #line) {
        XCTAssertEqual(key.modulusBitCount, bits, line: line)
        XCTAssertEqual(BigNumber(bytes: key.publicExponent).uintValue, e, line: line)
        let p = BigNumber(bytes: key.prime1), q = BigNumber(bytes: key.prime2)
        XCTAssertEqual(p.bitCount, (bits + 1) / 2, "p length", line: line)
        XCTAssertEqual(q.bitCount, bits / 2, "q length", line: line)
        XCTAssertGreaterThan((p - q).magnitude.compare(BigNumber.powerOfTwo(bits / 2 - 100)), 0, "|p - q|", line: line)
        XCTAssertGreaterThan(
            BigNumber(bytes: key.privateExponent).compare(BigNumber.powerOfTwo(bits / 2)), 0, "d > 2^(nlen/2)",
            line: line)
        let eBig = BigNumber(e)
        XCTAssertEqual((p - 1).gcd(eBig).uintValue, 1, line: line)
        XCTAssertEqual((q - 1).gcd(eBig).uintValue, 1, line: line)
        // Re-validate through the public initialiser.
        XCTAssertNoThrow(
            try RSAPrivateKey(
                modulus: key.modulus, publicExponent: key.publicExponent, privateExponent: key.privateExponent,
                prime1: key.prime1, prime2: key.prime2, exponent1: key.exponent1, exponent2: key.exponent2,
                coefficient: key.coefficient), line: line)
    }

    func testGenerate_DefaultIs2048BitsWithE65537() throws {
        let key = try RSAPrivateKey.generate()
        assertFIPSProperties(key, bits: 2048, e: 65537)
        let c = try key.publicKey.encrypt(Array("hello".utf8))
        XCTAssertEqual(try key.decrypt(c), Array("hello".utf8))
    }

    func testGenerate_ExactBitLengthsAndExponents() throws {
        for (bits, e) in [(1024, UInt64(65537)), (1025, 65537), (1536, 3), (2047, 17), (2049, 65537)] {
            let key = try RSAPrivateKey.generate(bitCount: bits, publicExponent: e)
            assertFIPSProperties(key, bits: bits, e: UInt(e))
        }
    }

    func testGenerate_TwentyKeysAt2048AreDistinct() throws {
        var moduli = Set<[UInt8]>()
        var primes = Set<[UInt8]>()
        for _ in 0..<20 {
            let key = try RSAPrivateKey.generate(bitCount: 2048)
            XCTAssertEqual(key.modulusBitCount, 2048)
            moduli.insert(key.modulus)
            primes.insert(key.prime1); primes.insert(key.prime2)
        }
        XCTAssertEqual(moduli.count, 20)
        XCTAssertEqual(primes.count, 40)
    }

    func testGenerate_LargeSizes() throws {
        guard longTestsEnabled else { throw XCTSkip("4096-bit generation runs with RSAKIT_LONG_TESTS=1") }
        for bits in [3072, 4096] {
            let key = try RSAPrivateKey.generate(bitCount: bits)
            assertFIPSProperties(key, bits: bits, e: 65537)
        }
    }

    func testGenerate_RefusesSmallAndHugeSizes() {
        XCTAssertThrowsError(try RSAPrivateKey.generate(bitCount: 1023)) { error in
            XCTAssertEqual(
                error as? RSAError, .keySizeUnsupported(bits: 1023, reason: "keys shorter than 1024 bits are refused"))
        }
        XCTAssertThrowsError(try RSAPrivateKey.generate(bitCount: 512))
        XCTAssertThrowsError(try RSAPrivateKey.generate(bitCount: 16385))
    }

    func testGenerate_RefusesBadExponents() {
        for e: UInt64 in [0, 1, 2, 4, 65536] {
            XCTAssertThrowsError(try RSAPrivateKey.generate(bitCount: 1024, publicExponent: e), "e = \(e)") { error in
                guard case .publicExponentUnsupported = error as? RSAError else {
                    return XCTFail("e = \(e): \(error)")
                }
            }
        }
    }

    func testGenerate_ProgressIsReportedAndCancellationStops() throws {
        var events: [RSAKeyGenerationProgress] = []
        _ = try RSAPrivateKey.generate(bitCount: 1024) { event in
            events.append(event)
            return true
        }
        // Each stage is announced when it starts, even when its first candidate is prime.
        XCTAssertEqual(events.first?.stage, .searchingFirstPrime)
        XCTAssertEqual(events.first?.candidatesTested, 0)
        XCTAssertTrue(events.contains { $0.stage == .searchingSecondPrime && $0.candidatesTested == 0 })
        XCTAssertEqual(events.last?.stage, .computingPrivateExponent)

        var calls = 0
        XCTAssertThrowsError(
            try RSAPrivateKey.generate(bitCount: 4096) { _ in
                calls += 1
                return calls < 3
            }
        ) { error in
            XCTAssertEqual(error as? RSAError, .keyGenerationCancelled)
        }
        XCTAssertEqual(calls, 3)
    }

    func testGenerate_DeterministicSourceGivesTheSameKey() throws {
        // The injectable source is the only randomness: the same seed gives the same key.
        let a = try RSAPrivateKey.generate(bitCount: 1024, random: DeterministicRandomSource(seed: 7))
        let b = try RSAPrivateKey.generate(bitCount: 1024, random: DeterministicRandomSource(seed: 7))
        let c = try RSAPrivateKey.generate(bitCount: 1024, random: DeterministicRandomSource(seed: 8))
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(a.modulus, c.modulus)
    }

    /// Fills the first `fixedCalls` requests with 0xFF (candidate 2^b - 1, which is odd,
    /// above sqrt(2) 2^(b-1) and divisible by 3 for even b: composite, counted against the
    /// bound), then passes every request on to `then`.
    final class AllOnesFirst: RSARandomSource, @unchecked Sendable {
        private var remaining: Int
        private let then: RSARandomSource
        private let lock = NSLock()
        init(fixedCalls: Int, then: RSARandomSource) { remaining = fixedCalls; self.then = then }
        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            lock.lock()
            let fixed = remaining > 0
            if fixed { remaining -= 1 }
            lock.unlock()
            if fixed {
                for i in buffer.indices { buffer[i] = 0xFF }
            } else {
                then.fill(buffer)
            }
        }
    }

    func testGenerate_BoundReachedStartsAFreshRunThatGivesTheSameKeyAsAFreshSource() throws {
        // 5 * 512 composite candidates for p: the first run reaches A.1.3's bound (step 4.7).
        // The second run draws from the seeded source's start, so it must give exactly the
        // key the seeded source gives on its own, and progress reports one restart.
        let expected = try RSAPrivateKey.generate(bitCount: 1024, random: DeterministicRandomSource(seed: 7))
        var restartsSeen: [Int] = []
        let key = try RSAPrivateKey.generate(
            bitCount: 1024,
            random: AllOnesFirst(fixedCalls: 5 * 512, then: DeterministicRandomSource(seed: 7)),
            progress: { report in
                if report.candidatesTested == 0 { restartsSeen.append(report.restarts) }
                return true
            })
        XCTAssertEqual(key, expected)
        assertFIPSProperties(key, bits: 1024, e: 65537)
        XCTAssertEqual(restartsSeen, [0, 1, 1, 1], "p run 1, then p, q and d of run 2")
    }

    func testGenerate_BoundReachedInEveryRunIsKeyGenerationFailed() {
        let attempts = RSAPrivateKey.maximumGenerationAttempts
        XCTAssertEqual(attempts, 8)
        XCTAssertThrowsError(
            try RSAPrivateKey.generate(
                bitCount: 1024, random: AllOnesFirst(fixedCalls: .max, then: SystemRandomSource()))
        ) { error in
            guard case let RSAError.keyGenerationFailed(reason) = error else {
                return XCTFail("expected keyGenerationFailed, got \(error)")
            }
            XCTAssertEqual(reason, "no prime found after 2560 candidates (FIPS 186-5 A.1.3 bound), in each of 8 runs")
        }
    }

    func testMillerRabin_KnownPrimesAndComposites() {
        let random = SystemRandomSource()
        // 2^127 - 1 and 2^521 - 1 are Mersenne primes; 2^128 + 1 is composite (Fermat F7).
        let m127 = BigNumber.powerOfTwo(127) - 1
        let m521 = BigNumber.powerOfTwo(521) - 1
        XCTAssertTrue(PrimeGeneration.isProbablePrimeVarTime(m127, rounds: 10, random: random))
        XCTAssertTrue(PrimeGeneration.isProbablePrimeVarTime(m521, rounds: 10, random: random))
        XCTAssertFalse(
            PrimeGeneration.isProbablePrimeVarTime(BigNumber.powerOfTwo(128) + 1, rounds: 10, random: random))
        // Carmichael number 561 = 3 * 11 * 17 and a strong pseudoprime to base 2 (2047 = 23 * 89).
        XCTAssertFalse(PrimeGeneration.isProbablePrimeVarTime(BigNumber(561), rounds: 10, random: random))
        XCTAssertFalse(PrimeGeneration.isProbablePrimeVarTime(BigNumber(2047), rounds: 10, random: random))
        // A product of two 64-bit primes.
        let semiprime = BigNumber(18446744073709551557) * BigNumber(18446744073709551533)
        XCTAssertFalse(PrimeGeneration.isProbablePrimeVarTime(semiprime, rounds: 10, random: random))
        XCTAssertFalse(PrimeGeneration.passesTrialDivision(BigNumber(16381) * BigNumber(16369)))
        XCTAssertTrue(PrimeGeneration.passesTrialDivision(m521))
    }

    func testTrialDivision_DivisibilityByMultiplicationAgreesWithRemainderForEverySmallPrime() {
        // Words that are, and are not, multiples of each prime, including the extremes.
        for group in PrimeGeneration.smallPrimeProducts {
            for test in group.tests {
                let p = test.prime
                let multiples: [UInt] = [0, p, 2 * p, p * (UInt.max / p), p * 12345]
                for r in multiples { XCTAssertTrue(test.divides(r), "\(p) | \(r)") }
                for r in [1, p - 1, p + 1, p * (UInt.max / p) - 1, (p * (UInt.max / p)) &+ 1, UInt.max] where r % p != 0
                {
                    XCTAssertFalse(test.divides(r), "\(p) does not divide \(r)")
                }
            }
            XCTAssertEqual(group.tests.reduce(UInt(1)) { $0 * $1.prime }, group.product)
        }
        XCTAssertEqual(
            PrimeGeneration.smallPrimeProducts.flatMap { $0.tests.map(\.prime) }, PrimeGeneration.smallPrimes)
        // Every odd number below 20000 with a factor below 2^14 is caught; the primes pass.
        for w in stride(from: UInt(3), to: 20000, by: 2) {
            let hasSmallFactor = PrimeGeneration.smallPrimes.contains { w % $0 == 0 && w != $0 }
            XCTAssertEqual(PrimeGeneration.passesTrialDivision(BigNumber(w)), !hasSmallFactor, "\(w)")
        }
    }

    func testCoprimeToPredecessor_AgreesWithGCD() {
        let random = DeterministicRandomSource(seed: 11)
        for e: UInt in [3, 17, 65537, 4_294_967_311, 0xFFFF_FFFF_FFFF_FFC5] {
            for _ in 0..<200 {
                var bytes = random.bytes(40)
                bytes[39] |= 1
                let w = BigNumber(bytes: bytes)
                let expected = (w - 1).gcd(BigNumber(e)).compare(1) == 0
                XCTAssertEqual(PrimeGeneration.isCoprimeToPredecessor(w, e: e), expected, "e = \(e)")
            }
            // w - 1 a multiple of e, and w = 1 (w - 1 = 0, gcd = e).
            XCTAssertFalse(PrimeGeneration.isCoprimeToPredecessor(BigNumber(e) * BigNumber(1234) + 1, e: e))
            XCTAssertFalse(PrimeGeneration.isCoprimeToPredecessor(BigNumber(1), e: e))
            XCTAssertTrue(PrimeGeneration.isCoprimeToPredecessor(BigNumber(e) + 2, e: e))
        }
    }

    func testMillerRabinRounds_FollowFIPSTableB1() {
        XCTAssertEqual(PrimeGeneration.millerRabinRounds(primeBitCount: 1024), 5)
        XCTAssertEqual(PrimeGeneration.millerRabinRounds(primeBitCount: 1536), 4)
        XCTAssertEqual(PrimeGeneration.millerRabinRounds(primeBitCount: 2048), 4)
        XCTAssertEqual(PrimeGeneration.millerRabinRounds(primeBitCount: 512), 7)
    }
}
