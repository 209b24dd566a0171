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
        try publicKey.requireEncryptionAllowed()
        let k = modulusByteCount
        // Step 1: the length of C must be k octets (public information).
        guard ciphertext.count == k, k >= EMEPKCS1v15.overheadByteCount else {
            throw RSAError.decryptionFailed
        }
        var em = try rsadp(ciphertext, random: random)
        defer { wipe(&em) }
        return try EMEPKCS1v15.decode(em)
    }

    /// ``decrypt(_:random:)`` for a group of blocks of this key (chunked decryption): the
    /// RSADP steps of each 8 blocks run together (``rsadp(batch:random:)``: one call of the
    /// kernel seam, eight lanes), each block with its own blinding factor, check and padding
    /// decode.
    /// - Returns: the plaintexts, in order. - Throws: `RSAError.decryptionFailed` when any
    ///   block fails (wrong length, C >= n, bad padding), as ``decrypt(_:)`` would for it.
    internal func decrypt(blocks: [ArraySlice<UInt8>], random: RSARandomSource) throws -> [[UInt8]] {
        try publicKey.requireEncryptionAllowed()
        let k = modulusByteCount
        guard k >= EMEPKCS1v15.overheadByteCount, blocks.allSatisfy({ $0.count == k }) else {
            throw RSAError.decryptionFailed
        }
        if blocks.count == 1 || !storage.prefersBlockGroups {
            return try blocks.map { try decrypt(Array($0), random: random) }
        }
        var outputs: [[UInt8]] = []
        outputs.reserveCapacity(blocks.count)
        var start = 0
        while start < blocks.count {
            let group = blocks[start..<min(start + ConstantTimeKey.batchLimit, blocks.count)]
            var ems = try rsadp(batch: group.map { Array($0) }, random: random)
            defer { for j in ems.indices { wipe(&ems[j]) } }
            for em in ems { outputs.append(try EMEPKCS1v15.decode(em)) }
            start += ConstantTimeKey.batchLimit
        }
        return outputs
    }

    /// Blocks per group that chunked decryption should hand to ``decrypt(blocks:random:)``:
    /// 8 (the kernel's lanes) when the vector path runs for this key, else 1.
    internal var preferredBlockGroupSize: Int { storage.prefersBlockGroups ? 8 : 1 }
}

/// Overwrite a byte array's contents with zeros (best effort: Swift may have made copies).
@inline(never)
internal func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
        for i in buffer.indices { buffer[i] = 0 }
    }
}
