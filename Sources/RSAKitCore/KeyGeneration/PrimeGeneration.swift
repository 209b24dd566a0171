/// Probable-prime search and testing for RSA key generation (FIPS 186-5 Appendix A.1.3
/// and B.3; Miller-Rabin as in FIPS 186-5 Appendix B.3.1).
internal enum PrimeGeneration {
    /// Odd primes below 2^14 (1899 of them, 3 ... 16381), for trial division.
    static let smallPrimes: [UInt] = {
        let limit = 1 << 14
        var composite = [Bool](repeating: false, count: limit)
        var primes: [UInt] = []
        for i in 2..<limit where !composite[i] {
            if i > 2 { primes.append(UInt(i)) }
            var j = i * i
            while j < limit { composite[j] = true; j += i }
        }
        return primes
    }()

    /// A divisibility test by one odd prime p without a division (Granlund and Montgomery,
    /// "Division by invariant integers using multiplication", 1994, §9): for odd p and any
    /// word r, p divides r exactly when r * p^-1 mod 2^64 <= floor((2^64 - 1) / p).
    struct DivisibilityTest {
        let prime: UInt
        /// p^-1 mod 2^64.
        let inverse: UInt
        /// floor((2^64 - 1) / p).
        let limit: UInt

        init(_ prime: UInt) {
            // Newton's iteration: prime * prime = 1 mod 8, so `prime` is its own inverse to
            // 3 bits; each step doubles the correct bits (3, 6, 12, 24, 48, 96).
            var inverse = prime
            for _ in 0..<5 { inverse &*= 2 &- prime &* inverse }
            self.prime = prime
            self.inverse = inverse
            self.limit = UInt.max / prime
        }

        @inline(__always)
        func divides(_ r: UInt) -> Bool { r &* inverse <= limit }
    }

    /// Products of consecutive small primes, each below 2^64, with a divisibility test per
    /// factor, so that trial division costs one multi-precision remainder per product and
    /// one multiplication per prime.
    static let smallPrimeProducts: [(product: UInt, tests: [DivisibilityTest])] = {
        var result: [(UInt, [DivisibilityTest])] = []
        var product: UInt = 1
        var group: [DivisibilityTest] = []
        for prime in smallPrimes {
            let (next, overflow) = product.multipliedReportingOverflow(by: prime)
            if overflow {
                result.append((product, group))
                product = prime
                group = [DivisibilityTest(prime)]
            } else {
                product = next
                group.append(DivisibilityTest(prime))
            }
        }
        if !group.isEmpty { result.append((product, group)) }
        return result
    }()

    /// Minimum Miller-Rabin rounds for a prime factor of `primeBitCount` bits when the
    /// candidate comes from a random search (FIPS 186-5 Table B.1, column for error
    /// probability 2^-112 / 2^-128 / 2^-144 at nlen = 2048 / 3072 / 4096).
    static func millerRabinRounds(primeBitCount: Int) -> Int {
        switch primeBitCount {
        case 2048...: return 4  // nlen >= 4096
        case 1536...: return 4  // nlen 3072
        case 1024...: return 5  // nlen 2048
        // NOTE: FIPS 186-5 does not cover nlen < 2048; FIPS 186-4 Table C.3 gave 7 rounds for
        // 512-bit factors (nlen 1024, error 2^-100). We use 7 for everything smaller.
        default: return 7
        }
    }

    /// True when `w` has no factor among the small primes (or is one of them).
    static func passesTrialDivision(_ w: BigNumber) -> Bool {
        for (product, tests) in smallPrimeProducts {
            // w mod prime = (w mod product) mod prime, for each prime of the product.
            let r = w.remainder(dividingBy: product)
            for test in tests where test.divides(r) {
                // w divisible by prime: composite unless w is that prime.
                return w.compare(test.prime) == 0
            }
        }
        return true
    }

    /// True when gcd(w - 1, e) = 1, for w >= 1 and an odd e >= 3 that fits in a word:
    /// gcd(w - 1, e) = gcd(e, (w - 1) mod e), one remainder and a word-sized Euclid.
    static func isCoprimeToPredecessor(_ w: BigNumber, e: UInt) -> Bool {
        let r = w.remainder(dividingBy: e)
        var a = e
        var b = r == 0 ? e - 1 : r - 1  // (w - 1) mod e
        while b != 0 { (a, b) = (b, a % b) }
        return a == 1
    }

    /// Miller-Rabin probabilistic primality test (FIPS 186-5 B.3.1) with `rounds` bases drawn
    /// uniformly from [2, w - 2] by `random`. `w` must be odd and > 3.
    /// Variable time: candidates that fail leak nothing useful, and GMP's mpz_powm is used.
    static func isProbablePrimeVarTime(_ w: BigNumber, rounds: Int, random: RSARandomSource) -> Bool {
        let wMinus1 = w - 1
        // Step 1-2: w - 1 = 2^a * m with m odd.
        var a = 0
        while !wMinus1.testBit(a) { a += 1 }
        let m = wMinus1.shiftedRight(a)
        let wMinus2 = w - 2
        let bitCount = w.bitCount
        let byteCount = (bitCount + 7) / 8
        let excessBits = byteCount * 8 - bitCount

        for _ in 0..<rounds {
            // Step 4.1-4.2: b random in (1, w - 1), i.e. 2 <= b <= w - 2.
            var b: BigNumber
            repeat {
                var bytes = random.bytes(byteCount)
                bytes[0] &= UInt8(0xFF >> excessBits)
                b = BigNumber(bytes: bytes)
            } while b.compare(2) < 0 || b.compare(wMinus2) > 0
            // Step 4.3: z = b^m mod w.
            let z = b.powModVarTime(m, w)
            // Step 4.4
            if z.compare(1) == 0 || z == wMinus1 { continue }
            // Step 4.5: square up to a - 1 times looking for w - 1.
            var reachedMinusOne = false
            var j = 1
            while j < a {
                z.squareMod(w)
                if z == wMinus1 { reachedMinusOne = true; break }
                if z.compare(1) == 0 { return false }
                j += 1
            }
            // Step 4.7: b is a witness that w is composite.
            if !reachedMinusOne { return false }
        }
        return true
    }
}
