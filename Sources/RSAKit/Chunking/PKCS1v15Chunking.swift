#if canImport(Glibc)
import Glibc
#endif

/// Data longer than one block, as raw concatenated EME-PKCS1-v1_5 blocks: the method of
/// Apple's Certificate, Key and Trust Services guide, of Java `Cipher` loops and of
/// `openssl pkeyutl` applied per block.
///
/// Encryption splits the input into slices of k - 11 bytes (the last one shorter) and
/// encrypts each into exactly k bytes; decryption takes k-byte blocks and concatenates the
/// plaintexts. Empty input gives empty output. Blocks are processed in parallel batches
/// and written in order; memory stays bounded whatever the input size.
///
/// This raw form has no integrity across blocks (blocks can be reordered or dropped
/// undetected); the rsakit container adds that on top.
public enum PKCS1v15Chunking {
    /// The default number of worker threads: the number of active processors.
    public static var defaultConcurrency: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Encrypt a whole stream.
    ///
    /// - Parameters:
    ///   - source: the plaintext, any length (read in batches).
    ///   - sink: receives ceil(length / (k - 11)) blocks of exactly k bytes each, in order.
    ///   - key: the recipient's public key (k >= 12, so that each block carries >= 1 byte).
    ///   - random: source of padding bytes.
    ///   - concurrency: worker threads (default: all processors).
    /// - Returns: the number of blocks written.
    /// - Throws: `RSAError.keySizeUnsupported` for k < 12; I/O errors of `source`/`sink`.
    @discardableResult
    public static func encrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPublicKey,
        random: RSARandomSource = SystemRandomSource(), concurrency: Int = defaultConcurrency
    ) throws -> UInt64 {
        let chunk = key.maximumMessageByteCount
        guard chunk >= 1 else {
            throw RSAError.keySizeUnsupported(bits: key.modulusBitCount, reason: "too small for PKCS#1 v1.5 blocks")
        }
        let pipeline = BlockPipeline(inputBlockSize: chunk, concurrency: max(1, concurrency))
        let random = random
        return try pipeline.run(
            source: &source, sink: &sink, finalBlock: .mayBeShort, emitBlockForEmptyInput: false
        ) { block in
            try key.encrypt(Array(block.bytes), random: random)
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
    ///   - concurrency: worker threads (default: all processors).
    /// - Returns: the number of blocks decrypted.
    /// - Throws: `RSAError.ciphertextLengthInvalid` for a length that is not a multiple of k;
    ///   `RSAError.decryptionFailed` when any block fails, whichever check failed;
    ///   I/O errors of `source`/`sink`.
    @discardableResult
    public static func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPrivateKey,
        random: RSARandomSource = SystemRandomSource(), concurrency: Int = defaultConcurrency
    ) throws -> UInt64 {
        let k = key.modulusByteCount
        if let total = source.remainingByteCount, total % k != 0 {
            throw RSAError.ciphertextLengthInvalid(byteCount: total, blockSize: k)
        }
        let pipeline = BlockPipeline(inputBlockSize: k, concurrency: max(1, concurrency))
        let random = random
        // Eight blocks per worker call when the multi-buffer kernel runs for this key.
        return try pipeline.run(
            source: &source, sink: &sink, finalBlock: .mustBeComplete, emitBlockForEmptyInput: false,
            groupSize: key.preferredBlockGroupSize
        ) { group in
            try key.decrypt(blocks: group.map(\.bytes), random: random)
        }.blockCount
    }

    /// Encrypt `plaintext` held in memory. Same output as the streaming form.
    /// - Returns: ceil(count / (k - 11)) * k bytes. - Throws: as the streaming form.
    public static func encrypt(
        _ plaintext: [UInt8], with key: RSAPublicKey,
        random: RSARandomSource = SystemRandomSource(), concurrency: Int = defaultConcurrency
    ) throws -> [UInt8] {
        var source = ArrayByteSource(plaintext)
        var sink = ArrayByteSink()
        try encrypt(from: &source, to: &sink, with: key, random: random, concurrency: concurrency)
        return sink.bytes
    }

    /// Decrypt `ciphertext` held in memory; its length must be a multiple of k (checked
    /// before any private-key operation).
    /// - Throws: as the streaming form.
    public static func decrypt(
        _ ciphertext: [UInt8], with key: RSAPrivateKey,
        random: RSARandomSource = SystemRandomSource(), concurrency: Int = defaultConcurrency
    ) throws -> [UInt8] {
        var source = ArrayByteSource(ciphertext)
        var sink = ArrayByteSink()
        try decrypt(from: &source, to: &sink, with: key, random: random, concurrency: concurrency)
        return sink.bytes
    }
}
