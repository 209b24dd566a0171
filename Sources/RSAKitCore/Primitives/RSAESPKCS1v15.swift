// RSAES-PKCS1-v1_5 (RFC 8017 §7.2): one block, as SecKeyEncrypt / SecKeyDecrypt with
// kSecPaddingPKCS1 do it.

extension RSAPublicKey {
    /// RSAES-PKCS1-V1_5-ENCRYPT (RFC 8017 §7.2.1): encrypt at most k - 11 bytes into one block.
    ///
    /// - Parameters:
    ///   - message: M, 0 to ``maximumMessageByteCount`` (k - 11) bytes.
    ///   - random: source of the padding string PS (defaults to the OS generator).
    /// - Returns: the ciphertext C, exactly ``modulusByteCount`` (k) bytes, leading zeros kept.
    /// - Throws: `RSAError.messageTooLong(byteCount:maximum:)` when M is longer than k - 11;
    ///   `RSAError.keyRestricted` for an id-RSASSA-PSS key (``pssRestriction``).
    /// - Note: Uses public data only (variable-time `mpz_powm`).
    public func encrypt(_ message: [UInt8], random: RSARandomSource = SystemRandomSource()) throws -> [UInt8] {
        try requireEncryptionAllowed()
        let em = try EMEPKCS1v15.encode(message, encodedLength: modulusByteCount, random: random)
        // EM starts with 0x00, so m < 256^(k-1) <= n: RSAEP cannot fail its range check.
        let c = try rsaep(BigNumber(bytes: em))
        return try c.bytes(count: modulusByteCount)
    }
}

extension RSAPrivateKey {
    /// RSAES-PKCS1-V1_5-DECRYPT (RFC 8017 §7.2.2): decrypt one k-byte block.
    ///
    /// - Parameter ciphertext: C, exactly k (``modulusByteCount``) bytes.
    /// - Returns: M, 0 to k - 11 bytes.
    /// - Throws: `RSAError.decryptionFailed` for every failure: wrong length (step 1),
    ///   C >= n (step 2.b), and any padding error (step 3). One error, no detail. Before
    ///   any of that, `RSAError.keyRestricted` for an id-RSASSA-PSS key (public knowledge).
    /// - Note: Constant-time: RSADP on GMP's `mpn_sec_*` layer with blinding and a
    ///   re-encryption check; the padding check is branch-free over EM (see
    ///   ``RSAHazmat/EMEPKCS1v15/decode(_:)``). Only the verdict and the message length are revealed.
    public func decrypt(_ ciphertext: [UInt8]) throws -> [UInt8] {
        try decrypt(ciphertext, random: SystemRandomSource())
    }

    /// ``decrypt(_:)-([UInt8])`` with an explicit random source for the blinding factor.
    public func decrypt(_ ciphertext: [UInt8], random: RSARandomSource) throws -> [UInt8] {
        try decrypt(ciphertext, rejection: .explicit, random: random)
    }

    /// RSAES-PKCS1-V1_5-DECRYPT with a choice of what a bad padding gives: an error
    /// (``RSAPaddingRejection/explicit``, as ``decrypt(_:)-([UInt8])``) or a synthetic message
    /// (``RSAPaddingRejection/implicit``, draft-irtf-cfrg-rsa-guidance §7; see
    /// ``RSAPaddingRejection`` for when to use which).
    ///
    /// - Parameters:
    ///   - ciphertext: C, exactly k (``modulusByteCount``) bytes.
    ///   - rejection: what a bad padding gives.
    ///   - random: source of the blinding factor (defaults to the OS generator).
    /// - Returns: M, 0 to k - 11 bytes; with `.implicit` and a bad padding, the synthetic
    ///   message (0 to k - 11 bytes, the same for the same key and C every time).
    /// - Throws: `RSAError.decryptionFailed` for a C that is not k bytes or not below n (both
    ///   public), and, with `.explicit` only, for a bad padding; `RSAError.keyRestricted` for
    ///   an id-RSASSA-PSS key.
    /// - Note: Constant-time as ``decrypt(_:)-([UInt8])``; with `.implicit`, the synthetic
    ///   message is always derived (HMAC-SHA256 over SHA-256(I2OSP(d, k)) and C) and the
    ///   choice between it and M is made with masks, so neither the time nor the control flow
    ///   depends on whether the padding was valid. Only the length of the result is revealed.
    public func decrypt(
        _ ciphertext: [UInt8], rejection: RSAPaddingRejection, random: RSARandomSource = SystemRandomSource()
    ) throws -> [UInt8] {
        try publicKey.requireEncryptionAllowed()
        let k = modulusByteCount
        // Step 1: the length of C must be k octets (public information).
        guard ciphertext.count == k, k >= EMEPKCS1v15.overheadByteCount else {
            throw RSAError.decryptionFailed
        }
        var em = try rsadp(ciphertext, random: random)
        defer { wipe(&em) }
        return try decode(em, of: ciphertext[...], rejection: rejection)
    }

    /// EME-PKCS1-v1_5 decoding of the EM of `ciphertext` under `rejection`.
    private func decode(_ em: [UInt8], of ciphertext: ArraySlice<UInt8>, rejection: RSAPaddingRejection) throws
        -> [UInt8]
    {
        guard rejection == .implicit else { return try EMEPKCS1v15.decode(em) }
        var fallback = try ImplicitRejectionFallback(d: storage.d, k: modulusByteCount, ciphertext: Array(ciphertext))
        defer { fallback.wipeContents() }
        return EMEPKCS1v15.decode(em, otherwise: fallback.message, length: fallback.length)
    }

    /// ``decrypt(_:random:)`` for a group of blocks of this key (chunked decryption): the
    /// RSADP steps of each 8 blocks run together (``rsadp(batch:random:)``: one call of the
    /// kernel seam, eight lanes), each block with its own blinding factor, check and padding
    /// decode.
    /// - Returns: the plaintexts, in order. - Throws: `RSAError.decryptionFailed` when any
    ///   block fails (wrong length, C >= n, bad padding with `.explicit`), as
    ///   ``decrypt(_:rejection:random:)-([UInt8],_,_)`` would for it.
    internal func decrypt(
        blocks: [ArraySlice<UInt8>], rejection: RSAPaddingRejection = .explicit, random: RSARandomSource
    ) throws -> [[UInt8]] {
        try publicKey.requireEncryptionAllowed()
        let k = modulusByteCount
        guard k >= EMEPKCS1v15.overheadByteCount, blocks.allSatisfy({ $0.count == k }) else {
            throw RSAError.decryptionFailed
        }
        if blocks.count == 1 || !storage.prefersBlockGroups {
            return try blocks.map { try decrypt(Array($0), rejection: rejection, random: random) }
        }
        var outputs: [[UInt8]] = []
        outputs.reserveCapacity(blocks.count)
        var start = 0
        while start < blocks.count {
            let group = blocks[start..<min(start + ConstantTimeKey.batchLimit, blocks.count)]
            var ems = try rsadp(batch: group.map { Array($0) }, random: random)
            defer { for j in ems.indices { wipe(&ems[j]) } }
            for (em, ciphertext) in zip(ems, group) {
                outputs.append(try decode(em, of: ciphertext, rejection: rejection))
            }
            start += ConstantTimeKey.batchLimit
        }
        return outputs
    }

    /// Blocks per group that chunked decryption should hand to ``decrypt(blocks:rejection:random:)``:
    /// 8 (the kernel's lanes) when the vector path runs for this key, else 1.
    package var preferredBlockGroupSize: Int { storage.prefersBlockGroups ? 8 : 1 }
}

/// Overwrite a byte array's contents with zeros (best effort: Swift may have made copies).
@inline(never)
package func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
        for i in buffer.indices { buffer[i] = 0 }
    }
}
