// RSAEP and RSADP, RFC 8017 §5.1.

extension RSAPublicKey {
    /// RSAEP (RFC 8017 §5.1.1): c = m^e mod n.
    ///
    /// - Parameter message: the message representative m as big-endian octets
    ///   (any length; leading zeros ignored).
    /// - Returns: the ciphertext representative c, I2OSP'd to exactly k bytes.
    /// - Throws: `RSAError.messageRepresentativeOutOfRange` unless 0 <= m < n (step 1).
    /// - Note: Variable time (GMP `mpz_powm`); every input is public.
    public func rsaep(_ message: [UInt8]) throws -> [UInt8] {
        let c = try rsaep(BigNumber(bytes: message))
        return try c.bytes(count: modulusByteCount)
    }

    internal func rsaep(_ m: BigNumber) throws -> BigNumber {
        guard m.sign >= 0, m.compare(n) < 0 else { throw RSAError.messageRepresentativeOutOfRange }
        return m.powModVarTime(e, n)
    }
}

extension RSAPrivateKey {
    /// RSADP (RFC 8017 §5.1.2, CRT form of step 2.b): m = c^d mod n.
    ///
    /// - Parameter ciphertext: the ciphertext representative c as big-endian octets.
    ///   Its length is not checked here (``decrypt(_:)`` requires exactly k bytes).
    /// - Returns: m, I2OSP'd to exactly k bytes (leading zeros kept).
    /// - Throws: `RSAError.decryptionFailed` unless 0 <= c < n (step 1: "ciphertext
    ///   representative out of range", reported opaquely); `RSAError.internalError` if the
    ///   re-encryption check fails (a fault, never caused by the input).
    /// - Note: Constant-time exponentiations (GMP `mpz_powm_sec`) on a blinded base;
    ///   the CRT recombination works on blinded values. See ``rsadp(_:random:)``.
    public func rsadp(_ ciphertext: [UInt8]) throws -> [UInt8] {
        try rsadp(ciphertext, random: SystemRandomSource())
    }

    /// RSADP with an explicit random source for the blinding factor.
    public func rsadp(_ ciphertext: [UInt8], random: RSARandomSource) throws -> [UInt8] {
        let m = try rsadp(BigNumber(bytes: ciphertext), random: random)
        return try m.bytes(count: modulusByteCount)
    }

    /// The private-key operation on integers.
    ///
    /// With (vf, vi) = (r^e, r^-1) mod n for a secret random r:
    ///
    ///     c' = c * vf mod n                      (blind: c' = (m r)^e)
    ///     m1 = (c' mod p)^dP mod p               (mpz_powm_sec)
    ///     m2 = (c' mod q)^dQ mod q               (mpz_powm_sec)
    ///     h  = qInv * (m1 - m2) mod p
    ///     m' = m2 + q * h                        (= m r mod n)
    ///     check m'^e mod n == c'                 (fault-attack defence)
    ///     m  = m' * vi mod n                     (unblind)
    internal func rsadp(_ c: BigNumber, random: RSARandomSource) throws -> BigNumber {
        let key = storage
        // Step 1: 0 <= c < n. Range failures are reported like every other decryption failure.
        guard c.sign >= 0, c.compare(key.n) < 0 else { throw RSAError.decryptionFailed }

        let (vf, vi) = nextBlindingPair(random: random)
        let blinded = (c * vf).mod(key.n)

        let mBlinded = key.crtExponentiation(blinded)

        // Re-encrypt before anything leaves: a fault in either half (Boneh-DeMillo-Lipton)
        // would otherwise reveal a factor of n. Public exponent, blinded values: VarTime is fine.
        guard mBlinded.powModVarTime(key.e, key.n) == blinded else {
            throw RSAError.internalError("private-key operation failed its consistency check")
        }
        mBlinded.multiplyMod(by: vi, key.n)
        return mBlinded
    }

    /// ``rsadp(_:random:)`` for several integers of one key (a group of chunked blocks): each
    /// value gets its own blinding pair (every lane its own random factor), the exponentiations
    /// run together (eight lanes of the vector kernel when it runs), then each value is checked
    /// by re-encryption and unblinded on its own.
    /// - Throws: `RSAError.decryptionFailed` if any c is out of range (before any private-key
    ///   work); `RSAError.internalError` if any re-encryption check fails.
    internal func rsadp(batch cs: [BigNumber], random: RSARandomSource) throws -> [BigNumber] {
        let key = storage
        for c in cs {
            guard c.sign >= 0, c.compare(key.n) < 0 else { throw RSAError.decryptionFailed }
        }
        var results: [BigNumber] = []
        results.reserveCapacity(cs.count)
        let lanes = 8
        var start = 0
        while start < cs.count {
            let group = cs[start..<min(start + lanes, cs.count)]
            let pairs = group.map { _ in nextBlindingPair(random: random) }
            let blinded = zip(group, pairs).map { c, pair in (c * pair.0).mod(key.n) }
            let mBlinded = key.crtExponentiation(batch: blinded)
            for j in mBlinded.indices {
                guard mBlinded[j].powModVarTime(key.e, key.n) == blinded[j] else {
                    throw RSAError.internalError("private-key operation failed its consistency check")
                }
                mBlinded[j].multiplyMod(by: pairs[j].1, key.n)
                results.append(mBlinded[j])
            }
            start += lanes
        }
        return results
    }

    /// Take the cached blinding pair (drawing a new one when due) and leave its square behind.
    /// Returns copies the caller owns.
    private func nextBlindingPair(random: RSARandomSource) -> (BigNumber, BigNumber) {
        let key = storage
        return key.blinding.withLock { slot -> (BigNumber, BigNumber) in
            var pair = slot ?? BlindingPair.fresh(n: key.n, e: key.e, random: random)
            if pair.usesLeft <= 0 {
                pair = BlindingPair.fresh(n: key.n, e: key.e, random: random)
            }
            let taken = (BigNumber(copying: pair.vf), BigNumber(copying: pair.vi))
            pair.vf.squareMod(key.n)
            pair.vi.squareMod(key.n)
            pair.usesLeft -= 1
            slot = pair
            return taken
        }
    }
}
