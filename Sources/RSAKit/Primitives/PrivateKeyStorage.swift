import Synchronization

/// The shared, immutable storage behind ``RSAPrivateKey`` plus its blinding cache.
///
/// The integers are never mutated after construction. The only mutable state is the
/// blinding pair, guarded by a mutex so that many threads may decrypt with one key.
internal final class PrivateKeyStorage: Sendable {
    let n: BigNumber
    let e: BigNumber
    let d: BigNumber
    let p: BigNumber
    let q: BigNumber
    let dP: BigNumber
    let dQ: BigNumber
    let qInv: BigNumber

    let blinding: Mutex<BlindingPair?> = Mutex(nil)

    /// The radix-2^52 vector kernel for the two exponentiations, when the dispatch runs it
    /// (``RSAKitEngine/privateKeyPath`` is `.ifma`) or a test asked for an implementation;
    /// nil: GMP's `mpz_powm_sec`.
    let vectorCRT: VectorCRT?

    /// - Parameter vector: `nil` asks the dispatch; `.some(impl)` forces an implementation
    ///   (tests of the vector path on any CPU).
    init(n: BigNumber, e: BigNumber, d: BigNumber, p: BigNumber, q: BigNumber,
         dP: BigNumber, dQ: BigNumber, qInv: BigNumber, vector: VectorImplementation? = nil) {
        self.n = n; self.e = e; self.d = d; self.p = p; self.q = q
        self.dP = dP; self.dQ = dQ; self.qInv = qInv
        if let vector {
            self.vectorCRT = VectorCRT(p: p, q: q, dP: dP, dQ: dQ, implementation: vector)
        } else {
            self.vectorCRT = VectorCRT.forDispatch(p: p, q: q, dP: dP, dQ: dQ)
        }
    }

    /// True when chunked decryption should hand this key eight blocks at a time.
    var prefersBlockGroups: Bool { vectorCRT != nil }

    /// c^d mod n by the CRT (RFC 8017 §5.1.2 step 2.b, cases i-iii), for 0 <= c < n:
    ///
    ///     m1 = (c mod p)^dP mod p                (mpz_powm_sec)
    ///     m2 = (c mod q)^dQ mod q                (mpz_powm_sec)
    ///     h  = qInv * (m1 - m2) mod p
    ///     m  = m2 + q * h
    ///
    /// The bare exponentiation: no blinding and no check, which ``RSAPrivateKey/rsadp(_:random:)``
    /// adds around it. The exponentiations are constant-time; the reductions and the
    /// recombination are not, which is why callers pass a blinded c.
    func crtExponentiation(_ c: BigNumber) -> BigNumber {
        if let vectorCRT {
            let (m1, m2) = vectorCRT.exponentiate([c])[0]
            return recombine(m1, m2)
        }
        let m1 = c.mod(p).powMod(dP, p)
        let m2 = c.mod(q).powMod(dQ, q)
        return recombine(m1, m2)
    }

    /// ``crtExponentiation(_:)`` for up to eight values (RSAKIT_VEC_LANES) at once: one
    /// multi-buffer kernel call per prime when the vector path runs, else one by one.
    func crtExponentiation(batch cs: [BigNumber]) -> [BigNumber] {
        guard let vectorCRT, cs.count > 1 else { return cs.map { crtExponentiation($0) } }
        return vectorCRT.exponentiate(cs).map { recombine($0.m1, $0.m2) }
    }

    /// Garner (RFC 8017 §5.1.2 step 2.b iii): h = qInv (m1 - m2) mod p, m = m2 + q h.
    private func recombine(_ m1: BigNumber, _ m2: BigNumber) -> BigNumber {
        let h = ((m1 - m2) * qInv).mod(p)
        return m2 + q * h
    }
}

/// A blinding pair (vf, vi) = (r^e mod n, r^-1 mod n) for a random r, and how many more
/// operations may use it before a fresh r is drawn.
///
/// Each use hands out the current pair and replaces it by (vf^2, vi^2) mod n, which is
/// again a valid pair (for r^2) and costs two modular squarings instead of an inversion.
/// Because squaring alone makes later pairs a function of the first, a fresh r is drawn
/// every ``BlindingPair/usesPerRandomValue`` operations (OpenSSL's BN_BLINDING does the same).
internal struct BlindingPair: @unchecked Sendable {
    static let usesPerRandomValue = 32

    var vf: BigNumber
    var vi: BigNumber
    var usesLeft: Int

    /// Draw r uniformly from [1, n) with gcd(r, n) = 1 and compute its pair.
    ///
    /// The inverse is computed on a blinded value: r^-1 = (r * s)^-1 * s mod n for a second
    /// random s, so GMP's variable-time inversion never sees r itself.
    static func fresh(n: BigNumber, e: BigNumber, random: RSARandomSource) -> BlindingPair {
        while true {
            let r = randomResidue(below: n, random: random)
            let s = randomResidue(below: n, random: random)
            let rs = (r * s).mod(n)
            guard let rsInverse = rs.inverseVarTime(modulo: n) else { continue }
            let vi = (rsInverse * s).mod(n)
            let vf = r.powMod(e, n)
            return BlindingPair(vf: vf, vi: vi, usesLeft: usesPerRandomValue)
        }
    }

    /// A uniform value in [1, n): rejection sampling over bitCount(n) random bits.
    static func randomResidue(below n: BigNumber, random: RSARandomSource) -> BigNumber {
        let bits = n.bitCount
        let byteCount = (bits + 7) / 8
        let excessBits = byteCount * 8 - bits
        while true {
            var bytes = random.bytes(byteCount)
            bytes[0] &= UInt8(0xFF >> excessBits)
            let candidate = BigNumber(bytes: bytes)
            for i in bytes.indices { bytes[i] = 0 }
            if candidate.sign > 0 && candidate.compare(n) < 0 {
                return candidate
            }
        }
    }
}
