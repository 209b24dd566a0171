// RSAES with a choice of padding (RFC 8017 §7): SecKeyCreateEncryptedData with
// kSecKeyAlgorithmRSAEncryptionPKCS1 or kSecKeyAlgorithmRSAEncryptionOAEPSHA*.

/// The encryption scheme of one RSA block.
public enum RSAEncryptionPadding: Sendable, Hashable, CustomStringConvertible {
    /// RSAES-PKCS1-v1_5 (RFC 8017 §7.2): at most k - 11 bytes per block.
    case pkcs1v15
    /// RSAES-OAEP (RFC 8017 §7.1): at most k - 2 hLen - 2 bytes per block.
    case oaep(RSAOAEPParameters)

    /// "PKCS#1 v1.5" or the OAEP parameters ("OAEP SHA-256, MGF1-SHA-256, empty label").
    public var description: String {
        switch self {
        case .pkcs1v15: return "PKCS#1 v1.5"
        case let .oaep(parameters): return parameters.description
        }
    }
}

extension RSAPublicKey {
    /// The most plaintext bytes one block carries with `padding`: k - 11 for PKCS#1 v1.5,
    /// k - 2 hLen - 2 for OAEP; 0 when the key is too small for the padding (then
    /// ``encrypt(_:padding:random:)-([UInt8],_,_)`` throws `keyTooSmallForPadding`).
    public func maximumMessageByteCount(padding: RSAEncryptionPadding) -> Int {
        switch padding {
        case .pkcs1v15: return maximumMessageByteCount
        case let .oaep(parameters): return max(0, modulusByteCount - parameters.overheadByteCount)
        }
    }

    /// RSAES-PKCS1-V1_5-ENCRYPT or RSAES-OAEP-ENCRYPT (RFC 8017 §7.2.1, §7.1.1): encrypt
    /// one block.
    ///
    /// - Parameters:
    ///   - message: M, 0 to ``maximumMessageByteCount(padding:)`` bytes.
    ///   - padding: the scheme (and for OAEP its hashes and label).
    ///   - random: source of PS (PKCS#1 v1.5) or of the seed (OAEP); the OS generator by default.
    /// - Returns: the ciphertext C, exactly k (``modulusByteCount``) bytes, leading zeros kept.
    /// - Throws: `RSAError.messageTooLong(byteCount:maximum:)` with the maximum of the padding;
    ///   `RSAError.keyTooSmallForPadding` when k < 2 hLen + 2 for OAEP; `RSAError.keyRestricted`
    ///   for an id-RSASSA-PSS key (``pssRestriction``).
    /// - Note: Uses public data only (variable-time `mpz_powm`).
    public func encrypt(
        _ message: [UInt8], padding: RSAEncryptionPadding, random: RSARandomSource = SystemRandomSource()
    ) throws -> [UInt8] {
        try requireEncryptionAllowed()
        switch padding {
        case .pkcs1v15:
            return try encrypt(message, random: random)
        case let .oaep(parameters):
            let em = try EMEOAEP.encode(
                message, encodedLength: modulusByteCount, parameters: parameters, random: random)
            // EM starts with 0x00, so m < 256^(k-1) <= n: RSAEP cannot fail its range check.
            return try rsaep(em)
        }
    }
}

extension RSAPrivateKey {
    /// RSAES-PKCS1-V1_5-DECRYPT or RSAES-OAEP-DECRYPT (RFC 8017 §7.2.2, §7.1.2): decrypt one
    /// k-byte block.
    ///
    /// - Parameters:
    ///   - ciphertext: C, exactly k (``modulusByteCount``) bytes.
    ///   - padding: the scheme the block was encrypted with.
    /// - Returns: M.
    /// - Throws: `RSAError.decryptionFailed` for every failure (wrong length, C >= n, any
    ///   padding error, wrong hash or label): one error, no detail; before any of that,
    ///   `RSAError.keyRestricted` for an id-RSASSA-PSS key (public knowledge).
    /// - Note: RSADP is constant-time, blinded and checked; the padding check is branch-free
    ///   over EM (``RSAHazmat/EMEPKCS1v15/decode(_:)``, ``RSAHazmat/EMEOAEP/decode(_:parameters:)``).
    public func decrypt(_ ciphertext: [UInt8], padding: RSAEncryptionPadding) throws -> [UInt8] {
        try decrypt(ciphertext, padding: padding, random: SystemRandomSource())
    }

    /// ``decrypt(_:padding:)-([UInt8],_)`` with an explicit random source for the blinding factor.
    public func decrypt(_ ciphertext: [UInt8], padding: RSAEncryptionPadding, random: RSARandomSource) throws -> [UInt8]
    {
        try publicKey.requireEncryptionAllowed()
        switch padding {
        case .pkcs1v15:
            return try decrypt(ciphertext, random: random)
        case let .oaep(parameters):
            let k = modulusByteCount
            // Step 1: |C| = k and k >= 2 hLen + 2 (public information), reported opaquely.
            guard ciphertext.count == k, k >= parameters.overheadByteCount else {
                throw RSAError.decryptionFailed
            }
            var em = try rsadp(ciphertext, random: random)
            defer { wipe(&em) }
            return try EMEOAEP.decode(em, parameters: parameters)
        }
    }

    /// RSADP and the padding decode of several k-byte blocks, in order, with every verdict
    /// still secret (``MaskedMessage``): for callers that fold more checks into the verdict
    /// before revealing it (the container's frame check). PKCS#1 v1.5 blocks of a key on the
    /// vector kernel go through ``rsadp(batch:random:)`` eight at a time.
    /// - Throws: `RSAError.decryptionFailed` for what is public: a block that is not k bytes,
    ///   a key too small for the padding, a block whose integer is not below n.
    package func decryptMasked(
        blocks: [ArraySlice<UInt8>], padding: RSAEncryptionPadding, random: RSARandomSource
    ) throws -> [MaskedMessage] {
        try publicKey.requireEncryptionAllowed()
        let k = modulusByteCount
        let overhead: Int
        switch padding {
        case .pkcs1v15: overhead = EMEPKCS1v15.overheadByteCount
        case let .oaep(parameters): overhead = parameters.overheadByteCount
        }
        guard k >= overhead, blocks.allSatisfy({ $0.count == k }) else { throw RSAError.decryptionFailed }
        var ems: [[UInt8]]
        if padding == .pkcs1v15 && blocks.count > 1 && storage.prefersBlockGroups {
            ems = []
            var start = 0
            while start < blocks.count {
                let group = blocks[start..<min(start + ConstantTimeKey.batchLimit, blocks.count)]
                ems += try rsadp(batch: group.map { Array($0) }, random: random)
                start += ConstantTimeKey.batchLimit
            }
        } else {
            ems = try blocks.map { try rsadp(Array($0), random: random) }
        }
        defer { for j in ems.indices { wipe(&ems[j]) } }
        return ems.map { em in
            switch padding {
            case .pkcs1v15: return EMEPKCS1v15.decodeMasked(em)
            case let .oaep(parameters): return EMEOAEP.decodeMasked(em, parameters: parameters)
            }
        }
    }

    /// Decrypt several k-byte blocks with `padding`, in order: PKCS#1 v1.5 blocks go through
    /// ``decrypt(blocks:rejection:random:)`` (the batch private operation, 8 lanes on the vector
    /// kernel), OAEP blocks one by one. Errors as ``decrypt(_:padding:random:)``.
    /// `rejection` applies to PKCS#1 v1.5 only (``RSAMessageFormat`` and ``RSARawBlocks``
    /// refuse it with OAEP before any block is read).
    internal func decrypt(
        blocks: [ArraySlice<UInt8>], padding: RSAEncryptionPadding,
        rejection: RSAPaddingRejection = .explicit, random: RSARandomSource
    ) throws -> [[UInt8]] {
        switch padding {
        case .pkcs1v15:
            return try decrypt(blocks: blocks, rejection: rejection, random: random)
        case .oaep:
            return try blocks.map { try decrypt(Array($0), padding: padding, random: random) }
        }
    }
}
