
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
/// export, equality and validation. The only mutable state is the blinding pair, guarded
/// by a mutex so that many threads may decrypt with one key.
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

    let blinding: PThreadMutex<BlindingState?> = PThreadMutex(nil)
    /// The blinding cache of the variable-time mpz reference path (``RSAPrivateKey/rsadpReferenceVarTime(_:random:)``).
    let referenceBlinding: PThreadMutex<BlindingPair?> = PThreadMutex(nil)

    /// The vector kernel attached to `secret` (issue 14), nil when the exponentiations run
    /// on GMP's `mpn_sec_powm`.
    let vectorKernel: VectorImplementation?

    /// True when chunked decryption should hand this key eight blocks at a time.
    var prefersBlockGroups: Bool { vectorKernel != nil }

    /// - Parameter vector: nil attaches the IFMA kernel when the dispatch runs it
    ///   (``RSAKitEngine/privateKeyPath``); `.some(impl)` attaches impl (tests on any CPU).
    /// - Throws: `RSAError.internalError` when the constant-time form cannot be built (a
    ///   validated key always can).
    init(n: BigNumber, e: BigNumber, d: BigNumber, p: BigNumber, q: BigNumber,
         dP: BigNumber, dQ: BigNumber, qInv: BigNumber, otherPrimes: [OtherPrime] = [],
         vector: VectorImplementation? = nil) throws {
        self.n = n; self.e = e; self.d = d; self.p = p; self.q = q
        self.dP = dP; self.dQ = dQ; self.qInv = qInv
        self.otherPrimes = otherPrimes
        guard let secret = ConstantTimeKey(
            n: n, e: e, primes: [p, q] + otherPrimes.map(\.prime),
            exponents: [dP, dQ] + otherPrimes.map(\.exponent),
            coefficients: [qInv] + otherPrimes.map(\.coefficient))
        else { throw RSAError.internalError("the key has no constant-time form") }
        self.secret = secret
        self.vectorKernel = VectorKernel.attach(to: secret, implementation: vector)
    }

    /// Hand out `count` blinding pairs, each used once: the cached pair, its square, its
    /// fourth power... (drawing a fresh r from `random` when due), leaving the next square
    /// behind. The squaring is constant-time (`mpn_sec_sqr`, `mpn_sec_div_r`).
    func takeBlindingPairs(_ count: Int, random: RSARandomSource) -> [SecretLimbs] {
        blinding.withLock { slot -> [SecretLimbs] in
            var pairs: [SecretLimbs] = []
            pairs.reserveCapacity(count)
            for _ in 0..<count {
                if slot == nil || slot!.usesLeft <= 0 {
                    slot = BlindingState(pair: secret.freshBlindingPair(random: random),
                                         usesLeft: BlindingPair.usesPerRandomValue)
                }
                let state = slot!
                pairs.append(SecretLimbs(copying: state.pair))
                secret.square(state.pair)
                slot!.usesLeft -= 1
            }
            return pairs
        }
    }
}

/// The cached blinding pair of the constant-time path: (vf, vi) = (r^e, r^-1) mod n as
/// limbs (``SecretLimbs``, zeroed when freed) and its remaining uses.
internal struct BlindingState: @unchecked Sendable {
    let pair: SecretLimbs
    var usesLeft: Int
}
