/// The rsakit message container: RSA blocks behind a public header, with a frame inside
/// every block's plaintext that binds the block to its message, its position, the end of
/// the stream and (version 2) every header byte, and that nobody without the private key
/// can forge (version 2).
///
/// Version 2 layout (written; all integers big-endian; documented for users in docs/container-format.md):
///
///     header (64 bytes, not encrypted)
///       0   8  magic            0x89 'R' 'S' 'A' 'K' 'I' 'T' 0x0A
///       8   1  version          0x02
///       9   1  padding scheme   0x01 = RSAES-PKCS1-v1_5 (RFC 8017 §7.2), 0x02 = RSAES-OAEP (§7.1)
///      10   1  OAEP hash        hash id (0x01 SHA-1 ... 0x0B SHA3-512); 0x00 for PKCS#1 v1.5
///      11   1  MGF1 hash        hash id; 0x00 for PKCS#1 v1.5
///      12   1  OAEP label       0x00 = the empty label (the only value)
///      13   1  reserved         0x00
///      14   2  k                block size in bytes (modulus length of the recipient key)
///      16  32  recipient        SHA-256 of the recipient's DER SubjectPublicKeyInfo
///      48  16  message id       random, fresh for every message
///     blocks, each exactly k bytes: the header's padding scheme applied to
///       0  16  message secret   random, fresh for every message, the same in every block;
///                               it appears nowhere outside the encrypted blocks
///      16  32  header digest    SHA-256 of the 64 header bytes
///      48   8  block index      0, 1, 2, ...
///      56   1  flags            bit 0 set on the final block, other bits zero
///      57   …  payload          0 to mLen - 57 bytes of the message (mLen: k - 11 for
///                               PKCS#1 v1.5, k - 2 hLen - 2 for OAEP)
///
/// Why this resists forged blocks: a block only decrypts if its frame carries the secret of
/// the other blocks, which someone holding only the public key never sees (it travels only
/// inside RSA ciphertexts). The header digest binds every header byte (ids, fingerprint,
/// scheme, k) to every block, so no header byte can change. The secret is compared in
/// constant time. Limits: a holder of the public key can still write a whole new message
/// (there is no sender authentication without a signature), and a decryption that fails
/// part-way has already streamed the blocks before the bad one (discard them).
///
/// Version 1 (read only) has a 60-byte header (magic, 0x01, 0x01, k at 10, recipient at 12,
/// message id at 44) and 17-byte frames (the first 8 bytes of the message id, index, flags):
/// its frame holds nothing secret, so anyone with the public key can replace a block.
public enum RSAMessageContainer {
    /// The 8-byte magic that starts every container.
    public static let magic: [UInt8] = [0x89, 0x52, 0x53, 0x41, 0x4B, 0x49, 0x54, 0x0A]
    /// The container format version this code writes (it also reads version 1).
    public static let version: UInt8 = 2
    /// Padding scheme identifier for RSAES-PKCS1-v1_5.
    public static let paddingSchemePKCS1v15: UInt8 = 1
    /// Padding scheme identifier for RSAES-OAEP (version 2).
    public static let paddingSchemeOAEP: UInt8 = 2
    /// Bytes in the header this code writes (version 2): 64.
    public static let headerByteCount = 64
    /// Bytes of framing inside each version 2 block's plaintext: 57.
    public static let frameByteCount = 57
    /// Bytes of the per-message secret in each version 2 frame: 16.
    public static let secretByteCount = 16

    /// Header bytes of a version: 60 for version 1, 64 for version 2.
    public static func headerByteCount(version: UInt8) -> Int { version == 1 ? 60 : 64 }

    /// Payload bytes per version 2 block for block size k and a padding: mLen - 57, where
    /// mLen is k - 11 (PKCS#1 v1.5) or k - 2 hLen - 2 (OAEP). May be 0 or negative for keys
    /// too small for the container.
    public static func payloadByteCount(blockSize k: Int, padding: RSAEncryptionPadding = .pkcs1v15) -> Int {
        let overhead: Int
        switch padding {
        case .pkcs1v15: overhead = EMEPKCS1v15.overheadByteCount
        case let .oaep(parameters): overhead = 2 * parameters.hash.digestByteCount + 2
        }
        return k - overhead - frameByteCount
    }

    static let v1FrameByteCount = 17

    /// True when `prefix` (the first bytes of an input) starts with the container magic.
    public static func hasMagic(_ prefix: [UInt8]) -> Bool {
        prefix.count >= magic.count && Array(prefix[0..<magic.count]) == magic
    }

    /// Encrypt a stream into a version 2 container for `key`.
    ///
    /// - Parameters:
    ///   - source: the plaintext, any length.
    ///   - sink: receives the 64-byte header, then ceil(max(1, length) / payload) blocks of k
    ///     bytes (payload: ``payloadByteCount(blockSize:padding:)``).
    ///   - key: the recipient's public key.
    ///   - padding: RSAES-PKCS1-v1_5 (default) or RSAES-OAEP with an empty label (the header
    ///     records the scheme and hashes, so decryption needs no options).
    ///   - random: source of the message id, the message secret and the padding.
    ///   - concurrency: worker threads.
    /// - Returns: the number of blocks written.
    /// - Throws: `RSAError.keySizeUnsupported` when a block cannot carry one payload byte
    ///   (or k > 65535); `RSAError.messageFormatUnsupported` for an OAEP label (the container
    ///   records only the empty label); I/O errors of source or sink.
    @discardableResult
    public static func encrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPublicKey,
        padding: RSAEncryptionPadding = .pkcs1v15,
        random: RSARandomSource = SystemRandomSource(),
        concurrency: Int = RSAPKCS1v15Chunking.defaultConcurrency
    ) throws -> UInt64 {
        if case let .oaep(parameters) = padding, !parameters.label.isEmpty {
            throw RSAError.messageFormatUnsupported(
                reason: "the rsakit container records OAEP with an empty label only; use raw blocks for a label")
        }
        let k = key.modulusByteCount
        let payload = payloadByteCount(blockSize: k, padding: padding)
        guard payload >= 1, k <= 0xFFFF else {
            throw RSAError.keySizeUnsupported(
                bits: key.modulusBitCount, reason: "too small for the rsakit container with \(padding) padding")
        }
        let header = Header(
            padding: padding, blockSize: k, recipientFingerprint: key.fingerprint,
            messageID: random.bytes(16))
        try sink.write(header.bytes)
        let digest = header.digest
        let secret = SecretBytes(random: random, count: secretByteCount)
        let pipeline = BlockPipeline(inputBlockSize: payload, concurrency: max(1, concurrency))
        let random = random
        return try pipeline.run(
            source: &source, sink: &sink, finalBlock: .mayBeShort, emitBlockForEmptyInput: true
        ) { block in
            // frame = secret (16) || SHA-256(header) (32) || index (8) || flags (1) || payload
            var frame = secret.array
            frame.reserveCapacity(frameByteCount + block.bytes.count)
            frame += digest
            appendBigEndian(block.index, to: &frame)
            frame.append(block.isFinal ? 0x01 : 0x00)
            frame.append(contentsOf: block.bytes)
            defer { wipe(&frame) }
            return try key.encrypt(frame, padding: padding, random: random)
        }.blockCount
    }

    /// Decrypt the blocks of a container whose header has already been read.
    ///
    /// - Parameters:
    ///   - header: the parsed header (version 1 or 2); its fingerprint and k must match `key`.
    ///   - source: positioned just after the header.
    ///   - sink: receives the payloads in order; on failure, discard what was written.
    ///   - key: the recipient's private key.
    ///   - random: source of blinding factors.
    ///   - concurrency: worker threads.
    /// - Returns: the number of blocks decrypted.
    /// - Throws: `RSAError.encryptedForAnotherKey` (with the header's fingerprint) when the
    ///   fingerprint is not the key's, before any private-key operation;
    ///   `RSAError.containerInvalid` when k differs from the key's;
    ///   `RSAError.ciphertextLengthInvalid` for a body that is not whole blocks;
    ///   `RSAError.decryptionFailed` for any block that fails to decrypt or whose frame does
    ///   not match (one opaque error for all), including an empty body (no final block).
    @discardableResult
    public static func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        header: Header, from source: inout Source, to sink: inout Sink, with key: RSAPrivateKey,
        random: RSARandomSource = SystemRandomSource(),
        concurrency: Int = RSAPKCS1v15Chunking.defaultConcurrency
    ) throws -> UInt64 {
        try decrypt(header: header, from: &source, to: &sink, blockKey: key, random: random, concurrency: concurrency)
    }

    /// ``decrypt(header:from:to:with:random:concurrency:)`` for any key that decrypts blocks
    /// (a key in memory, or a token key's session).
    package static func decrypt<Source: RSAByteSource, Sink: RSAByteSink, Key: ContainerBlockKey>(
        header: Header, from source: inout Source, to sink: inout Sink, blockKey key: Key,
        random: RSARandomSource, concurrency: Int
    ) throws -> UInt64 {
        let k = key.modulusByteCount
        // Checked before any private-key operation.
        guard header.recipientFingerprint == key.containerFingerprint else {
            throw RSAError.encryptedForAnotherKey(expected: header.recipientFingerprint)
        }
        guard header.blockSize == k else {
            throw RSAError.containerInvalid(reason: "block size \(header.blockSize) does not match the key's \(k)")
        }
        if let total = source.remainingByteCount, total % k != 0 {
            throw RSAError.ciphertextLengthInvalid(byteCount: total, blockSize: k)
        }
        let pipeline = BlockPipeline(inputBlockSize: k, concurrency: max(1, concurrency))
        let count: UInt64
        if header.version == 1 {
            count = try decryptVersion1(header, &source, &sink, key, random, pipeline)
        } else {
            var checking = SecretCheckingSink(inner: sink)
            defer { sink = checking.inner }
            count = try decryptVersion2(header, &source, &checking, key, random, pipeline)
        }
        // An empty body has no final block: truncated.
        guard count > 0 else { throw RSAError.decryptionFailed }
        return count
    }

    private static func decryptVersion2<Source: RSAByteSource, Sink: RSAByteSink, Key: ContainerBlockKey>(
        _ header: Header, _ source: inout Source, _ sink: inout Sink, _ key: Key,
        _ random: RSARandomSource, _ pipeline: BlockPipeline
    ) throws -> UInt64 {
        let digest = header.digest
        let padding = header.padding
        let fullPayload = payloadByteCount(blockSize: header.blockSize, padding: padding)
        // Eight blocks per worker call when the multi-buffer kernel runs for this key.
        return try pipeline.run(
            source: &source, sink: &sink, finalBlock: .mustBeComplete, emitBlockForEmptyInput: false,
            groupSize: padding == .pkcs1v15 ? key.preferredBlockGroupSize : 1
        ) { group in
            // One verdict per block, revealed once: padding, frame length, digest, index and
            // final flag are folded together with masks, so a block whose padding is wrong and
            // one whose padding is right but whose frame is not fail the same way, in the same
            // time (else the difference is a padding oracle: the timing harness measured
            // 140 ns, |t| 32, before this). The secret is checked in constant time by
            // SecretCheckingSink, which compares it with block 0's before it writes the payload.
            var messages = try key.decryptMasked(blocks: group.map(\.bytes), padding: padding, random: random)
            defer { for j in messages.indices { messages[j].wipeContents() } }
            return try zip(group, messages).map { block, message in
                // A key too small to hold a frame is public.
                guard message.buffer.count >= frameByteCount else { throw RSAError.decryptionFailed }
                let length = message.length
                var verdict = message.good & ConstantTime.greaterOrEqual(length, UInt(frameByteCount))
                if block.isFinal {
                    verdict &= ~ConstantTime.greaterOrEqual(length, UInt(frameByteCount + fullPayload + 1))
                    // An empty final block after full ones is not what encrypt writes (found by
                    // Fuzz/FuzzContainer: it decrypted, but re-encrypted to one block fewer).
                    if block.index != 0 { verdict &= ~ConstantTime.greaterOrEqual(UInt(frameByteCount), length) }
                } else {
                    verdict &= ConstantTime.equalWords(length, UInt(frameByteCount + fullPayload))
                }
                verdict &= frameMatchesVersion2Mask(
                    message.buffer, headerDigest: digest, index: block.index, isFinal: block.isFinal)
                verdict = ConstantTimeAudit.opaque(verdict)
                ConstantTimeAudit.declassify(&verdict)
                guard verdict != 0 else { throw RSAError.decryptionFailed }
                var revealed = length
                ConstantTimeAudit.declassify(&revealed)
                return Array(message.buffer[0..<secretByteCount])
                    + Array(message.buffer[frameByteCount..<Int(revealed)])
            }
        }.blockCount
    }

    private static func decryptVersion1<Source: RSAByteSource, Sink: RSAByteSink, Key: ContainerBlockKey>(
        _ header: Header, _ source: inout Source, _ sink: inout Sink, _ key: Key,
        _ random: RSARandomSource, _ pipeline: BlockPipeline
    ) throws -> UInt64 {
        let shortID = Array(header.messageID[0..<8])
        let fullPayload = header.blockSize - EMEPKCS1v15.overheadByteCount - v1FrameByteCount
        return try pipeline.run(
            source: &source, sink: &sink, finalBlock: .mustBeComplete, emitBlockForEmptyInput: false,
            groupSize: key.preferredBlockGroupSize
        ) { group in
            var frames = try key.decryptPKCS1v15(blocks: group.map(\.bytes), random: random)
            defer { for j in frames.indices { wipe(&frames[j]) } }
            return try zip(group, frames).map { block, frame in
                guard frame.count >= v1FrameByteCount,
                    block.isFinal || frame.count - v1FrameByteCount == fullPayload,
                    frame.count > v1FrameByteCount || block.index == 0
                else { throw RSAError.decryptionFailed }
                // Version 1 frames hold only public values; still compared without branching
                // on the decrypted bytes, and all fail the same way.
                guard frameMatchesVersion1(frame, shortID: shortID, index: block.index, isFinal: block.isFinal) else {
                    throw RSAError.decryptionFailed
                }
                return Array(frame[v1FrameByteCount...])
            }
        }.blockCount
    }

    /// The version 2 frame check of one decrypted block (bytes 16-56: header digest, index,
    /// final flag), without branching on the frame's bytes: the differences are OR-ed into
    /// one byte and only the verdict is declassified. `frame` holds at least
    /// ``frameByteCount`` bytes; `headerDigest` is 32 bytes.
    internal static func frameMatchesVersion2(_ frame: [UInt8], headerDigest: [UInt8], index: UInt64, isFinal: Bool)
        -> Bool
    {
        var matches = frameMatchesVersion2Mask(frame, headerDigest: headerDigest, index: index, isFinal: isFinal)
        ConstantTimeAudit.declassify(&matches)
        return matches != 0
    }

    /// ``frameMatchesVersion2(_:headerDigest:index:isFinal:)`` as a secret mask (all-ones on a
    /// match), for folding into a larger verdict. `frame` holds at least 57 bytes.
    internal static func frameMatchesVersion2Mask(_ frame: [UInt8], headerDigest: [UInt8], index: UInt64, isFinal: Bool)
        -> UInt
    {
        var difference: UInt8 = 0
        for i in 0..<32 { difference |= frame[16 + i] ^ headerDigest[i] }
        for i in 0..<8 { difference |= frame[48 + i] ^ UInt8(truncatingIfNeeded: index >> UInt64(56 - 8 * i)) }
        difference |= frame[56] ^ (isFinal ? 0x01 : 0x00)
        return ConstantTime.isZero(difference)
    }

    /// The version 1 frame check (message id prefix, index, final flag), branch-free over the
    /// frame like ``frameMatchesVersion2(_:headerDigest:index:isFinal:)``. `frame` holds at least 17 bytes.
    internal static func frameMatchesVersion1(_ frame: [UInt8], shortID: [UInt8], index: UInt64, isFinal: Bool) -> Bool
    {
        var difference: UInt8 = 0
        for i in 0..<8 {
            difference |= frame[i] ^ shortID[i]
            difference |= frame[8 + i] ^ UInt8(truncatingIfNeeded: index >> UInt64(56 - 8 * i))
        }
        difference |= frame[16] ^ (isFinal ? 0x01 : 0x00)
        var matches = ConstantTime.isZero(difference)
        ConstantTimeAudit.declassify(&matches)
        return matches != 0
    }

    /// Encrypt `plaintext` held in memory into a version 2 container.
    /// - Returns: the whole container (64 + blocks * k bytes).
    /// - Throws: as the streaming form.
    public static func encrypt(
        _ plaintext: [UInt8], to key: RSAPublicKey, padding: RSAEncryptionPadding = .pkcs1v15,
        random: RSARandomSource = SystemRandomSource()
    ) throws -> [UInt8] {
        var source = RSAArrayByteSource(plaintext)
        var sink = RSAArrayByteSink()
        try encrypt(from: &source, to: &sink, with: key, padding: padding, random: random)
        return sink.bytes
    }

    /// Decrypt a whole container (version 1 or 2) held in memory; nothing is returned unless
    /// every block checks.
    /// - Throws: `RSAError.containerInvalid` for a bad header, and every error of the
    ///   streaming ``decrypt(header:from:to:with:random:concurrency:)``.
    public static func decrypt(_ container: [UInt8], with key: RSAPrivateKey) throws -> [UInt8] {
        let header = try Header(parsing: container)
        var source = RSAArrayByteSource(Array(container[header.byteCount...]))
        var sink = RSAArrayByteSink()
        try decrypt(header: header, from: &source, to: &sink, with: key)
        return sink.bytes
    }
}

/// Receives `secret || payload` per block (in order) and writes the payload only when the
/// secret equals block 0's, compared in constant time.
struct SecretCheckingSink<Inner: RSAByteSink>: RSAByteSink {
    var inner: Inner
    private var expected: SecretBytes?

    init(inner: Inner) { self.inner = inner }

    mutating func write(_ bytes: [UInt8]) throws {
        var bytes = bytes
        defer { wipe(&bytes) }
        let n = RSAMessageContainer.secretByteCount
        guard bytes.count >= n else { throw RSAError.decryptionFailed }
        if let expected {
            guard expected.isEqual(to: bytes[0..<n]) else { throw RSAError.decryptionFailed }
        } else {
            expected = SecretBytes(copying: bytes[0..<n])
        }
        try inner.write(Array(bytes[n...]))
    }
}

/// Append `value` as 8 big-endian bytes.
func appendBigEndian(_ value: UInt64, to bytes: inout [UInt8]) {
    for shift in stride(from: 56, through: 0, by: -8) {
        bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
    }
}

/// The big-endian integer in `bytes` (at most 8).
package func readBigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.reduce(0) { $0 << 8 | UInt64($1) }
}

/// Equal length and contents, without a branch on the contents.
func constantTimeEqual(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) { difference |= x ^ y }
    return difference == 0
}

/// What container decryption needs of a key: its size, its fingerprint and block decryption
/// (RSAPrivateKey in memory; a token key's open session).
package protocol ContainerBlockKey: Sendable {
    /// k, in bytes.
    var modulusByteCount: Int { get }
    /// The fingerprint a container's header must name.
    var containerFingerprint: RSAKeyFingerprint { get }
    /// Blocks per worker call.
    var preferredBlockGroupSize: Int { get }
    /// RSADP and the padding decode of k-byte blocks, verdicts still secret.
    func decryptMasked(blocks: [ArraySlice<UInt8>], padding: RSAEncryptionPadding, random: RSARandomSource) throws
        -> [MaskedMessage]
    /// RSAES-PKCS1-v1_5 decryption of k-byte blocks (version 1 containers).
    func decryptPKCS1v15(blocks: [ArraySlice<UInt8>], random: RSARandomSource) throws -> [[UInt8]]
}

extension RSAPrivateKey: ContainerBlockKey {
    package var containerFingerprint: RSAKeyFingerprint { publicKey.fingerprint }
    package func decryptPKCS1v15(blocks: [ArraySlice<UInt8>], random: RSARandomSource) throws -> [[UInt8]] {
        try decrypt(blocks: blocks, random: random)
    }
}
