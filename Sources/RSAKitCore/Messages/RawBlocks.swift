#if canImport(Glibc)
import Glibc
#endif

/// Data longer than one block as raw concatenated RSA blocks: the method of Apple's
/// Certificate, Key and Trust Services guide, of Java `Cipher` loops and of
/// `openssl pkeyutl` applied per block, with either encryption padding.
///
/// Encryption splits the input into slices of ``RSAPublicKey/maximumMessageByteCount(padding:)``
/// bytes (k - 11 for RSAES-PKCS1-v1_5, k - 2 hLen - 2 for RSAES-OAEP; the last slice shorter)
/// and encrypts each into exactly k bytes; decryption takes k-byte blocks and concatenates
/// the plaintexts. Empty input gives empty output. Blocks are processed in parallel batches
/// and written in order; memory stays bounded whatever the input size.
///
/// Raw blocks have no integrity across blocks (blocks can be reordered, dropped or forged by
/// anyone holding the public key, undetected); the rsakit container (``RSAMessageContainer``)
/// adds that on top.
public enum RSARawBlocks {
    /// Encrypt a whole stream into k-byte blocks.
    ///
    /// - Parameters:
    ///   - source: the plaintext, any length (read in batches).
    ///   - sink: receives ceil(length / m) blocks of exactly k bytes each, in order, where m
    ///     is the padding's maximum message length.
    ///   - key: the recipient's public key; each block must carry at least 1 byte.
    ///   - padding: RSAES-PKCS1-v1_5 (RFC 8017 §7.2) or RSAES-OAEP (§7.1), label included.
    ///   - random: source of padding bytes or OAEP seeds.
    ///   - concurrency: worker threads (default: all processors).
    /// - Returns: the number of blocks written.
    /// - Throws: `RSAError.keySizeUnsupported` when a block cannot carry one byte with this
    ///   padding; I/O errors of `source`/`sink`.
    @discardableResult
    public static func encrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPublicKey,
        padding: RSAEncryptionPadding, random: RSARandomSource = SystemRandomSource(),
        concurrency: Int = RSAPKCS1v15Chunking.defaultConcurrency
    ) throws -> UInt64 {
        let chunk = key.maximumMessageByteCount(padding: padding)
        guard chunk >= 1 else {
            throw RSAError.keySizeUnsupported(bits: key.modulusBitCount, reason: "too small for \(padding) blocks")
        }
        let pipeline = BlockPipeline(inputBlockSize: chunk, concurrency: max(1, concurrency))
        let random = random
        return try pipeline.run(
            source: &source, sink: &sink, finalBlock: .mayBeShort, emitBlockForEmptyInput: false
        ) { block in
            try key.encrypt(Array(block.bytes), padding: padding, random: random)
        }.blockCount
    }

    /// Decrypt a whole stream of k-byte blocks.
    ///
    /// - Parameters:
    ///   - source: the ciphertext; its length must be a multiple of k. When the source knows
    ///     its length (a regular file, an array), a bad length is rejected before any
    ///     private-key operation; for a pipe, before the batch holding the short tail.
    ///   - sink: receives the plaintexts in order. On a failure, what was already written
    ///     must be discarded by the caller.
    ///   - key: the private key.
    ///   - padding: the padding the blocks were made with (a mismatch fails as `decryptionFailed`).
    ///   - rejection: what a PKCS#1 v1.5 block with a bad padding gives: an error (default)
    ///     or its synthetic message (``RSAPaddingRejection/implicit``, for protocols; see
    ///     ``RSAPaddingRejection``). Only PKCS#1 v1.5 has implicit rejection.
    ///   - random: source of blinding factors.
    ///   - concurrency: worker threads (default: all processors).
    /// - Returns: the number of blocks decrypted.
    /// - Throws: `RSAError.messageFormatUnsupported` for implicit rejection with OAEP (before
    ///   reading); `RSAError.ciphertextLengthInvalid` for a length that is not a multiple of k;
    ///   `RSAError.decryptionFailed` when any block fails, whichever check failed (with
    ///   implicit rejection: only a block whose integer is not below n);
    ///   I/O errors of `source`/`sink`.
    /// - Note: each block uses the blinded, constant-time RSADP and a branch-free padding check.
    @discardableResult
    public static func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPrivateKey,
        padding: RSAEncryptionPadding, rejection: RSAPaddingRejection = .explicit,
        random: RSARandomSource = SystemRandomSource(),
        concurrency: Int = RSAPKCS1v15Chunking.defaultConcurrency
    ) throws -> UInt64 {
        if rejection == .implicit, padding != .pkcs1v15 {
            throw RSAError.messageFormatUnsupported(
                reason: "implicit rejection is defined for PKCS#1 v1.5 padding only, not \(padding)")
        }
        let k = key.modulusByteCount
        if let total = source.remainingByteCount, total % k != 0 {
            throw RSAError.ciphertextLengthInvalid(byteCount: total, blockSize: k)
        }
        let pipeline = BlockPipeline(inputBlockSize: k, concurrency: max(1, concurrency))
        let random = random
        // Eight blocks per worker call when the multi-buffer kernel runs for this key.
        return try pipeline.run(
            source: &source, sink: &sink, finalBlock: .mustBeComplete, emitBlockForEmptyInput: false,
            groupSize: padding == .pkcs1v15 ? key.preferredBlockGroupSize : 1
        ) { group in
            try key.decrypt(blocks: group.map(\.bytes), padding: padding, rejection: rejection, random: random)
        }.blockCount
    }
}

/// Raw RSAES-PKCS1-v1_5 blocks: ``RSARawBlocks`` with `.pkcs1v15` padding, kept under its
/// first name.
///
/// Encryption splits the input into slices of k - 11 bytes (the last one shorter) and
/// encrypts each into exactly k bytes; decryption takes k-byte blocks and concatenates the
/// plaintexts. Empty input gives empty output.
public enum RSAPKCS1v15Chunking {
    /// The default number of worker threads: the number of active processors, or fewer
    /// inside an `async` RSAKit call (the workers it was granted; see ``RSAMessage``'s
    /// async variants).
    public static var defaultConcurrency: Int { RSAWorkerBudget.currentLimit }

    /// Encrypt a whole stream: ``RSARawBlocks/encrypt(from:to:with:padding:random:concurrency:)``
    /// with RSAES-PKCS1-v1_5.
    /// - Returns: the number of blocks written (ceil(length / (k - 11)), each exactly k bytes).
    /// - Throws: `RSAError.keySizeUnsupported` for k < 12; I/O errors of `source`/`sink`.
    @discardableResult
    public static func encrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPublicKey,
        random: RSARandomSource = SystemRandomSource(), concurrency: Int = defaultConcurrency
    ) throws -> UInt64 {
        try RSARawBlocks.encrypt(
            from: &source, to: &sink, with: key, padding: .pkcs1v15,
            random: random, concurrency: concurrency)
    }

    /// Decrypt a whole stream of k-byte RSAES-PKCS1-v1_5 blocks.
    ///
    /// - Parameters:
    ///   - source: the ciphertext, a multiple of k bytes (checked before any private-key
    ///     operation when the source knows its length).
    ///   - sink: receives the plaintexts in order; discard it on failure.
    ///   - key: the private key. - random: source of blinding factors.
    ///   - concurrency: worker threads.
    /// - Returns: the number of blocks decrypted.
    /// - Throws: `RSAError.ciphertextLengthInvalid`; `RSAError.decryptionFailed` for any bad
    ///   block; I/O errors.
    @discardableResult
    public static func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPrivateKey,
        random: RSARandomSource = SystemRandomSource(), concurrency: Int = defaultConcurrency
    ) throws -> UInt64 {
        try RSARawBlocks.decrypt(
            from: &source, to: &sink, with: key, padding: .pkcs1v15,
            random: random, concurrency: concurrency)
    }

    /// Encrypt `plaintext` held in memory. Same output as the streaming form.
    /// - Returns: ceil(count / (k - 11)) * k bytes. - Throws: as the streaming form.
    public static func encrypt(
        _ plaintext: [UInt8], with key: RSAPublicKey,
        random: RSARandomSource = SystemRandomSource(), concurrency: Int = defaultConcurrency
    ) throws -> [UInt8] {
        try overArrays(plaintext) {
            try encrypt(from: &$0, to: &$1, with: key, random: random, concurrency: concurrency)
        }
    }

    /// Decrypt `ciphertext` held in memory; its length must be a multiple of k (checked
    /// before any private-key operation).
    /// - Throws: as the streaming form.
    public static func decrypt(
        _ ciphertext: [UInt8], with key: RSAPrivateKey,
        random: RSARandomSource = SystemRandomSource(), concurrency: Int = defaultConcurrency
    ) throws -> [UInt8] {
        try overArrays(ciphertext) {
            try decrypt(from: &$0, to: &$1, with: key, random: random, concurrency: concurrency)
        }
    }

    /// Run a streaming form over `input` held in memory and return all it wrote.
    private static func overArrays(
        _ input: [UInt8], _ body: (inout RSAArrayByteSource, inout RSAArrayByteSink) throws -> UInt64
    ) throws -> [UInt8] {
        var source = RSAArrayByteSource(input)
        var sink = RSAArrayByteSink()
        _ = try body(&source, &sink)
        return sink.bytes
    }
}
