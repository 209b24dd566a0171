// RSAEP and RSADP, RFC 8017 §5.1.

extension RSAPublicKey {
    /// RSAEP (RFC 8017 §5.1.1): c = m^e mod n.
    ///
    /// - Parameter message: the message representative m as big-endian octets
    ///   (any length; leading zeros ignored).
    /// - Returns: the ciphertext representative c, I2OSP'd to exactly k bytes.
    /// - Throws: `RSAError.messageRepresentativeOutOfRange` unless 0 <= m < n (step 1).
    /// - Note: Variable time (GMP `mpz_powm`); every input is public.
    internal func rsaep(_ message: [UInt8]) throws -> [UInt8] {
        let c = try rsaep(BigNumber(bytes: message))
        return try c.bytes(count: modulusByteCount)
    }

    internal func rsaep(_ m: BigNumber) throws -> BigNumber {
        guard m.sign >= 0, m.compare(n) < 0 else { throw RSAError.messageRepresentativeOutOfRange }
        return m.powModVarTime(e, n)
    }
}

extension RSAPrivateKey {
    /// RSADP (RFC 8017 §5.1.2, CRT form of step 2.b over every prime): m = c^d mod n.
    ///
    /// - Parameter ciphertext: the ciphertext representative c as big-endian octets.
    ///   Its length is not checked here (``decrypt(_:)`` requires exactly k bytes).
    /// - Returns: m, I2OSP'd to exactly k bytes (leading zeros kept).
    /// - Throws: `RSAError.decryptionFailed` unless 0 <= c < n (step 1: "ciphertext
    ///   representative out of range", reported opaquely); `RSAError.internalError` if the
    ///   re-encryption check fails (a fault, never caused by the input).
    /// - Note: Constant-time: GMP's side-channel-silent `mpn_sec_*` layer throughout
    ///   (blinding, exponentiations, recombination, check, unblinding); see
    ///   `rsadp(_:random:)` and `rsakit_secret.h`.
    internal func rsadp(_ ciphertext: [UInt8]) throws -> [UInt8] {
        try rsadp(ciphertext, random: SystemRandomSource())
    }

    /// RSADP with an explicit random source for the blinding factor.
    ///
    /// With (vf, vi) = (r^e, r^-1) mod n for a secret random r (cached and squared between
    /// uses, fresh every 32 operations), all on fixed-size limb arrays in C:
    ///
    ///     c' = c * vf mod n                      (blind: c' = (m r)^e)
    ///     m_i = (c' mod r_i)^(d_i) mod r_i       (mpn_sec_powm, per prime: the kernel seam)
    ///     m' = Garner(m_1, ..., m_u)             (mpn_sec_mul, mpn_sec_div_r, mpn_cnd_add_n)
    ///     check m'^e mod n == c'                 (fault-attack defence, before anything leaves)
    ///     m  = m' * vi mod n                     (unblind)
    ///
    /// - Throws: as `rsadp(_:)`.
    internal func rsadp(_ ciphertext: [UInt8], random: RSARandomSource) throws -> [UInt8] {
        try rsadp(batch: [ciphertext], random: random)[0]
    }

    /// RSADP on up to 8 ciphertext representatives of this key in one call (the batch
    /// entry point of `rsakit_secret.h`: the exponentiations of all blocks reach the
    /// kernel seam together). Each block has its own blinding pair.
    ///
    /// - Parameter ciphertexts: 1 to 8 values c_j as big-endian octets.
    /// - Returns: m_j as exactly k bytes each, in order.
    /// - Throws: `RSAError.decryptionFailed` when any c_j >= n, `RSAError.internalError`
    ///   when any block fails its check.
    internal func rsadp(batch ciphertexts: [[UInt8]], random: RSARandomSource) throws -> [[UInt8]] {
        let key = storage
        let k = modulusByteCount
        precondition(!ciphertexts.isEmpty && ciphertexts.count <= ConstantTimeKey.batchLimit)
        // Step 1: 0 <= c < n, on public data. A c of any length is brought to k octets.
        var inputs: [[UInt8]] = []
        for ciphertext in ciphertexts {
            let c = BigNumber(bytes: ciphertext)
            guard c.compare(key.n) < 0 else { throw RSAError.decryptionFailed }
            inputs.append(try c.bytes(count: k))
        }
        let pairs = key.takeBlindingPairs(inputs.count, random: random)
        var results = key.secret.privateOperation(inputs, pairs: pairs)
        defer { for j in results.indices { wipe(&results[j].output) } }
        var outputs: [[UInt8]] = []
        for result in results {
            switch result.status {
            case .ok: outputs.append(result.output)
            case .outOfRange: throw RSAError.decryptionFailed
            case .checkFailed, .badArgument:
                throw RSAError.internalError("private-key operation failed its consistency check")
            }
        }
        return outputs
    }
}
