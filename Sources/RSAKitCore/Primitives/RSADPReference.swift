// The private-key operation as RSAKit ran it before the constant-time rewrite: GMP's
// `mpz` layer, `mpz_powm_sec` for the exponentiations but variable-time reductions,
// products and recombination. Kept, named VarTime, as the reference that the differential
// tests compare the constant-time path with, and for the valgrind harness's "before" count.
// Never used by decryption or signing.

extension RSAPrivateKey {
    /// RSADP (RFC 8017 §5.1.2) on the variable-time `mpz` path: blinded, CRT over every
    /// prime, checked by re-encryption. Reference only (tests, the constant-time harness).
    ///
    /// - Parameter ciphertext: c as big-endian octets (any length).
    /// - Returns: m = c^d mod n as exactly k bytes.
    /// - Throws: `RSAError.decryptionFailed` unless 0 <= c < n; `RSAError.internalError`
    ///   when the re-encryption check fails.
    /// - Note: NOT constant-time (the reductions and the recombination use `mpz_mod`,
    ///   `mpz_mul`).
    package func rsadpReferenceVarTime(_ ciphertext: [UInt8], random: RSARandomSource) throws -> [UInt8] {
        let key = storage
        let c = BigNumber(bytes: ciphertext)
        guard c.sign >= 0, c.compare(key.n) < 0 else { throw RSAError.decryptionFailed }
        let (vf, vi) = key.referenceBlinding.withLock { slot -> (BigNumber, BigNumber) in
            var pair = slot ?? BlindingPair.fresh(n: key.n, e: key.e, random: random)
            if pair.usesLeft <= 0 { pair = BlindingPair.fresh(n: key.n, e: key.e, random: random) }
            let taken = (BigNumber(copying: pair.vf), BigNumber(copying: pair.vi))
            pair.vf.squareMod(key.n)
            pair.vi.squareMod(key.n)
            pair.usesLeft -= 1
            slot = pair
            return taken
        }
        let blinded = (c * vf).mod(key.n)
        let mBlinded = key.crtExponentiationReferenceVarTime(blinded)
        guard mBlinded.powModVarTime(key.e, key.n) == blinded else {
            throw RSAError.internalError("private-key operation failed its consistency check")
        }
        mBlinded.multiplyMod(by: vi, key.n)
        return try mBlinded.bytes(count: modulusByteCount)
    }
}

extension PrivateKeyStorage {
    /// c^d mod n by the CRT over every prime (RFC 8017 §5.1.2 step 2.b), for 0 <= c < n:
    ///
    ///     m_i = (c mod r_i)^(d_i) mod r_i        (mpz_powm_sec)
    ///     h = (m_1 - m_2) qInv mod p;  m = m_2 + q h;  R = p q
    ///     for i = 3 ... u: h = (m_i - m) t_i mod r_i;  m = m + R h;  R = R r_i
    ///
    /// Variable-time reductions and products: the reference, not the production path.
    func crtExponentiationReferenceVarTime(_ c: BigNumber) -> BigNumber {
        let m1 = c.mod(p).powMod(dP, p)
        let m2 = c.mod(q).powMod(dQ, q)
        let h = ((m1 - m2) * qInv).mod(p)
        var m = m2 + q * h
        var r = p * q
        for other in otherPrimes {
            let mi = c.mod(other.prime).powMod(other.exponent, other.prime)
            let hi = ((mi - m) * other.coefficient).mod(other.prime)
            m = m + r * hi
            r = r * other.prime
        }
        return m
    }
}

/// A blinding pair (vf, vi) = (r^e mod n, r^-1 mod n) for the mpz reference path, and how
/// many more operations may use it before a fresh r is drawn.
///
/// Each use hands out the current pair and replaces it by (vf^2, vi^2) mod n, which is
/// again a valid pair (for r^2). Because squaring alone makes later pairs a function of
/// the first, a fresh r is drawn every ``BlindingPair/usesPerRandomValue`` operations
/// (OpenSSL's BN_BLINDING does the same); the constant-time path uses the same count.
internal struct BlindingPair: @unchecked Sendable {
    static let usesPerRandomValue = 32

    var vf: BigNumber
    var vi: BigNumber
    var usesLeft: Int

    /// Draw r uniformly from [1, n) with gcd(r, n) = 1 and compute its pair; the inverse
    /// is computed on r * s for a second random s.
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
