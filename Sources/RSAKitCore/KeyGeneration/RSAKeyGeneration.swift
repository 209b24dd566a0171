/// What key generation reports to its progress callback.
public struct RSAKeyGenerationProgress: Sendable, Equatable {
    /// Which prime is being searched for.
    public enum Stage: Sendable, Equatable {
        /// Searching for p (FIPS 186-5 A.1.3 step 4).
        case searchingFirstPrime
        /// Searching for q (FIPS 186-5 A.1.3 step 5).
        case searchingSecondPrime
        /// p and q found; computing and checking d (FIPS 186-5 A.1.1 / B.3.1 step 3).
        case computingPrivateExponent
    }

    /// The current stage.
    public let stage: Stage
    /// Candidates that reached the primality test in this stage so far (the `i` of
    /// FIPS 186-5 A.1.3 step 4.6), bounded by 5 * (nlen / 2).
    public let candidatesTested: Int
    /// How many times the whole search restarted with fresh candidates: because d was too
    /// small, or because one prime search reached A.1.3's bound (almost always 0).
    public let restarts: Int
}

extension RSAPrivateKey {
    /// The smallest modulus size ``generate(bitCount:publicExponent:random:progress:)`` accepts, in bits.
    public static let minimumGeneratedBitCount = 1024
    /// The largest modulus size ``generate(bitCount:publicExponent:random:progress:)`` accepts, in bits.
    public static let maximumGeneratedBitCount = 16384
    /// How many complete A.1.3 runs ``generate(bitCount:publicExponent:random:progress:)``
    /// makes, each with fresh candidates, before it reports that a prime search reached the
    /// bound of steps 4.7 / 5.8.
    public static let maximumGenerationAttempts = 8

    /// Generate a new key pair with probable primes (FIPS 186-5 Appendix A.1.3).
    ///
    /// - Parameters:
    ///   - bitCount: nlen, the exact bit length of n, 1024 ... 16384 (default 2048). Odd sizes
    ///     are allowed: p gets ceil(nlen/2) bits and q floor(nlen/2).
    ///   - publicExponent: e, odd and >= 3 (default 65537). FIPS 186-5 asks for
    ///     2^16 < e < 2^256; smaller odd e (3, 17) are accepted for interoperability.
    ///   - random: source of every candidate and Miller-Rabin base (default: the OS generator).
    ///   - progress: called when each stage starts (with `candidatesTested` 0), after each
    ///     rejected candidate, and before d is computed; return `false` to cancel.
    /// - Returns: a validated key whose n has exactly `bitCount` bits, with
    ///   p, q >= sqrt(2) * 2^(len - 1), gcd(e, p - 1) = gcd(e, q - 1) = 1,
    ///   |p - q| > 2^(nlen/2 - 100), d = e^-1 mod lcm(p - 1, q - 1) > 2^(nlen/2).
    /// - Throws: `RSAError.keySizeUnsupported` outside 1024 ... 16384 bits;
    ///   `RSAError.publicExponentUnsupported` for an even e or e < 3;
    ///   `RSAError.keyGenerationCancelled` when `progress` returns false;
    ///   `RSAError.keyGenerationFailed` when ``maximumGenerationAttempts`` runs in a row each
    ///   reached the bound of A.1.3 steps 4.7 / 5.8 (5 * (nlen/2) candidates for one prime).
    ///   FIPS 186-5 has A.1.3 return FAILURE there; like Go's and OpenSSL's default key
    ///   generation, this starts a new run with fresh candidates instead of passing the
    ///   failure on. For a prime e, one search reaches the bound with probability about
    ///   exp(-(10 / ln 2) (e - 2) / (e - 1)) whatever nlen (5 (nlen/2) odd candidates, each
    ///   prime with probability 2 / ln 2^(nlen/2), of which gcd(p - 1, e) = 1 keeps
    ///   (e - 2) / (e - 1)): 2^-21 with e = 65537, but 1 in 1,360 with e = 3, so about one
    ///   e = 3 key in 680 needs a second run.
    /// - Note: Primality tests are variable time (`isProbablePrimeVarTime`), like Nettle's and Go's;
    ///   d and qInv come from GMP's variable-time inversion, once per key.
    public static func generate(
        bitCount: Int = 2048,
        publicExponent: UInt64 = 65537,
        random: RSARandomSource = SystemRandomSource(),
        progress: ((RSAKeyGenerationProgress) -> Bool)? = nil
    ) throws -> RSAPrivateKey {
        guard bitCount >= minimumGeneratedBitCount else {
            throw RSAError.keySizeUnsupported(
                bits: bitCount, reason: "keys shorter than \(minimumGeneratedBitCount) bits are refused")
        }
        guard bitCount <= maximumGeneratedBitCount else {
            throw RSAError.keySizeUnsupported(
                bits: bitCount, reason: "keys longer than \(maximumGeneratedBitCount) bits are not supported")
        }
        guard publicExponent >= 3 else {
            throw RSAError.publicExponentUnsupported(reason: "e must be at least 3")
        }
        guard publicExponent & 1 == 1 else {
            throw RSAError.publicExponentUnsupported(reason: "e must be odd")
        }
        let e = BigNumber(UInt(publicExponent))
        let pBits = (bitCount + 1) / 2
        let qBits = bitCount / 2
        let rounds = PrimeGeneration.millerRabinRounds(primeBitCount: qBits)
        // |p - q| must exceed 2^(nlen/2 - 100) (A.1.3 step 5.4).
        let minimumDistance = BigNumber.powerOfTwo(bitCount / 2 - 100)
        // d must exceed 2^(nlen/2) (FIPS 186-5 A.1.1 step 3 / B.3.1).
        let minimumD = BigNumber.powerOfTwo(bitCount / 2)

        var restarts = 0
        var boundFailures = 0
        while true {
            let p: BigNumber, q: BigNumber
            do {
                p = try searchPrime(
                    bits: pBits, e: e, rounds: rounds, random: random,
                    stage: .searchingFirstPrime, restarts: restarts, progress: progress, avoiding: nil)
                q = try searchPrime(
                    bits: qBits, e: e, rounds: rounds, random: random,
                    stage: .searchingSecondPrime, restarts: restarts, progress: progress,
                    avoiding: (p, minimumDistance))
            } catch RSAError.keyGenerationFailed(let reason) {
                // A.1.3 returned FAILURE (steps 4.7 / 5.8): a new run, as for a small d.
                boundFailures += 1
                guard boundFailures < maximumGenerationAttempts else {
                    throw RSAError.keyGenerationFailed(reason: "\(reason), in each of \(boundFailures) runs")
                }
                restarts += 1
                continue
            }
            if let progress,
                !progress(
                    RSAKeyGenerationProgress(
                        stage: .computingPrivateExponent, candidatesTested: 0, restarts: restarts))
            {
                throw RSAError.keyGenerationCancelled
            }
            // By convention p > q, so that qInv = q^-1 mod p matches what OpenSSL writes.
            let (big, small) = p.compare(q) > 0 ? (p, q) : (q, p)
            let key = try RSAPrivateKey(p: big, q: small, e: e)
            guard key.storage.d.compare(minimumD) > 0, key.modulusBitCount == bitCount else {
                restarts += 1
                continue
            }
            return key
        }
    }

    /// One prime of `bits` bits per FIPS 186-5 A.1.3 step 4 (or step 5 when `avoiding`
    /// gives p and the minimum distance).
    private static func searchPrime(
        bits: Int, e: BigNumber, rounds: Int, random: RSARandomSource,
        stage: RSAKeyGenerationProgress.Stage, restarts: Int,
        progress: ((RSAKeyGenerationProgress) -> Bool)?,
        avoiding other: (prime: BigNumber, minimumDistance: BigNumber)?
    ) throws -> BigNumber {
        // sqrt(2) * 2^(bits - 1) = sqrt(2^(2 bits - 1)); candidates must not be below it.
        let lowerBound = BigNumber.powerOfTwo(2 * bits - 1).squareRoot()
        // e < 2^64 (generate takes a UInt64).
        guard let eWord = e.uintValue else {
            throw RSAError.publicExponentUnsupported(reason: "e must be below 2^64")
        }
        let byteCount = (bits + 7) / 8
        let excessBits = byteCount * 8 - bits
        let limit = 5 * bits
        var tested = 0
        // Each stage is reported when it starts, so a caller sees it even when the first
        // candidate is prime (about one draw in 180 at 512 bits).
        if let progress,
            !progress(
                RSAKeyGenerationProgress(
                    stage: stage, candidatesTested: 0, restarts: restarts))
        {
            throw RSAError.keyGenerationCancelled
        }
        while true {
            // Step 4.2: a string of `bits` random bits.
            var bytes = random.bytes(byteCount)
            bytes[0] &= UInt8(0xFF >> excessBits)
            // Setting the top bit keeps step 4.4's outcome distribution: every value with it
            // clear is below sqrt(2) * 2^(bits - 1) and step 4.4 would reject it, so the
            // accepted candidates stay uniform over the same set, with half as many draws.
            bytes[0] |= UInt8(0x80 >> excessBits)
            // Step 4.3: make it odd.
            bytes[bytes.count - 1] |= 1
            let candidate = BigNumber(bytes: bytes)
            wipe(&bytes)
            // Step 4.4: p >= sqrt(2) * 2^(nlen/2 - 1).
            guard candidate.compare(lowerBound) >= 0 else { continue }
            // Step 5.4: |p - q| > 2^(nlen/2 - 100).
            if let other, (candidate - other.prime).magnitude.compare(other.minimumDistance) <= 0 {
                continue
            }
            // Step 4.5: gcd(p - 1, e) = 1 and p probably prime. Cheapest test first: trial
            // division discards most candidates; the order does not change which pass.
            if PrimeGeneration.passesTrialDivision(candidate),
                PrimeGeneration.isCoprimeToPredecessor(candidate, e: eWord),
                PrimeGeneration.isProbablePrimeVarTime(candidate, rounds: rounds, random: random)
            {
                return candidate
            }
            // Steps 4.6-4.7: count and bound.
            tested += 1
            if let progress,
                !progress(
                    RSAKeyGenerationProgress(
                        stage: stage, candidatesTested: tested, restarts: restarts))
            {
                throw RSAError.keyGenerationCancelled
            }
            if tested >= limit {
                throw RSAError.keyGenerationFailed(
                    reason: "no prime found after \(limit) candidates (FIPS 186-5 A.1.3 bound)")
            }
        }
    }
}
