/// One additional prime of a multi-prime key (RFC 8017 §3.2, `OtherPrimeInfo`): r_i,
/// d_i = d mod (r_i - 1) and t_i = (r_1 ... r_(i-1))^-1 mod r_i, for i >= 3.
internal struct OtherPrime: @unchecked Sendable {
    let prime: BigNumber
    let exponent: BigNumber
    let coefficient: BigNumber
}

/// The shared, immutable storage behind ``RSAPrivateKey`` plus its blinding cache.
///
/// The integers are never mutated after construction. `secret` is the constant-time form
/// the private-key operation runs on (`rsakit_secret.h`); the `BigNumber` components serve
/// export, equality and validation. The only mutable state is the blinding cache (one pair
/// per lane of a batch), guarded by a mutex so that many threads may decrypt with one key.
internal final class PrivateKeyStorage: Sendable {
    let n: BigNumber
    let e: BigNumber
    let d: BigNumber
    let p: BigNumber
    let q: BigNumber
    let dP: BigNumber
    let dQ: BigNumber
    let qInv: BigNumber
    /// r_3 ... r_u of a multi-prime key (empty for two primes).
    let otherPrimes: [OtherPrime]
    /// The constant-time key (all primes, exponents and coefficients as fixed-size limbs).
    let secret: ConstantTimeKey

    let blinding: PThreadMutex<BlindingLanes> = PThreadMutex(BlindingLanes())
    /// The blinding cache of the variable-time mpz reference path (``RSAPrivateKey/rsadpReferenceVarTime(_:random:)``).
    let referenceBlinding: PThreadMutex<BlindingPair?> = PThreadMutex(nil)

    /// The vector kernel attached to `secret`, nil when the exponentiations run
    /// on GMP's `mpn_sec_powm`.
    let vectorKernel: VectorImplementation?

    /// True when the ADX kernel runs this key's private operations.
    let adxKernel: Bool

    /// The path this key's private operations run on.
    var path: RSAPrivateKeyPath { vectorKernel != nil ? .ifma : adxKernel ? .adx : .gmp }

    /// True when chunked decryption should hand this key eight blocks at a time (the IFMA
    /// kernel's eight lanes; the ADX kernel takes one block at a time).
    var prefersBlockGroups: Bool { vectorKernel != nil }

    /// - Parameter vector: nil attaches the kernel of the process's path
    ///   (``RSAKitEngine/privateKeyPath``: IFMA or ADX; none for GMP); `.some(impl)` attaches
    ///   that vector implementation (tests on any CPU).
    /// - Throws: `RSAError.internalError` when the constant-time form cannot be built (a
    ///   validated key always can); `RSAError.engineUnavailable` when `RSAKIT_ENGINE` forces
    ///   a path this machine cannot run.
    init(
        n: BigNumber, e: BigNumber, d: BigNumber, p: BigNumber, q: BigNumber,
        dP: BigNumber, dQ: BigNumber, qInv: BigNumber, otherPrimes: [OtherPrime] = [],
        vector: VectorImplementation? = nil
    ) throws {
        self.n = n; self.e = e; self.d = d; self.p = p; self.q = q
        self.dP = dP; self.dQ = dQ; self.qInv = qInv
        self.otherPrimes = otherPrimes
        guard
            let secret = ConstantTimeKey(
                n: n, e: e, primes: [p, q] + otherPrimes.map(\.prime),
                exponents: [dP, dQ] + otherPrimes.map(\.exponent),
                coefficients: [qInv] + otherPrimes.map(\.coefficient))
        else { throw RSAError.internalError("the key has no constant-time form") }
        self.secret = secret
        if vector == nil, case let .failure(error) = EngineSelection.selected { throw error }
        self.vectorKernel = VectorKernel.attach(to: secret, implementation: vector)
        self.adxKernel = vector == nil && RSAKitEngine.privateKeyPath == .adx && VectorKernel.attachADX(to: secret)
    }

    /// Hand out `count` (1 ... ``ConstantTimeKey/batchLimit``) blinding pairs, each used
    /// once, one per lane of a batch: lane j's pair is r_j, r_j^2, r_j^4... of its own r_j
    /// (a fresh r_j from `random` on first use and every ``BlindingPair/usesPerRandomValue``
    /// uses), so the next squares of all the lanes are formed together, in one call
    /// (`rsakit_sec_blinding_square_batch`: the eight-lane kernel where attached, else
    /// `mpn_sec_sqr` and `mpn_sec_div_r`). Constant-time in the pairs.
    func takeBlindingPairs(_ count: Int, random: RSARandomSource) -> [SecretLimbs] {
        precondition(count >= 1 && count <= ConstantTimeKey.batchLimit)
        return blinding.withLock { lanes -> [SecretLimbs] in
            var pairs: [SecretLimbs] = []
            pairs.reserveCapacity(count)
            for lane in 0..<count {
                if lane == lanes.pairs.count {
                    lanes.pairs.append(secret.freshBlindingPair(random: random))
                    lanes.usesLeft.append(BlindingPair.usesPerRandomValue)
                } else if lanes.usesLeft[lane] <= 0 {
                    lanes.pairs[lane] = secret.freshBlindingPair(random: random)
                    lanes.usesLeft[lane] = BlindingPair.usesPerRandomValue
                }
                pairs.append(SecretLimbs(copying: lanes.pairs[lane]))
                lanes.usesLeft[lane] -= 1
            }
            secret.square(Array(lanes.pairs.prefix(count)))
            return pairs
        }
    }
}

/// The blinding cache of the constant-time path: one pair (vf, vi) = (r^e, r^-1) mod n per
/// lane of a batch, as limbs (``SecretLimbs``, zeroed when freed), each with its remaining
/// uses. Lanes are added as batches grow, up to ``ConstantTimeKey/batchLimit``.
internal struct BlindingLanes: @unchecked Sendable {
    var pairs: [SecretLimbs] = []
    var usesLeft: [Int] = []
}
