/// The rsakit message container, version 1: raw EME-PKCS1-v1_5 blocks behind a header,
/// with a frame inside every block's plaintext that binds the block to its message, its
/// position and the end of the stream.
///
/// Layout (all integers big-endian; documented for users in README.md):
///
///     header (60 bytes, not encrypted)
///       0   8  magic            0x89 'R' 'S' 'A' 'K' 'I' 'T' 0x0A
///       8   1  version          0x01
///       9   1  padding scheme   0x01 = RSAES-PKCS1-v1_5 (RFC 8017 §7.2)
///      10   2  k                block size in bytes (modulus length of the recipient key)
///      12  32  recipient        SHA-256 of the recipient's DER SubjectPublicKeyInfo
///      44  16  message id       random, fresh for every message
///     blocks, each exactly k bytes: RSAES-PKCS1-v1_5 encryption of
///       0   8  message id       the first 8 bytes of the header's message id
///       8   8  block index      0, 1, 2, ...
///      16   1  flags            bit 0 set on the final block, other bits zero
///      17   …  payload          0 to k - 11 - 17 bytes of the message
///
/// Every block but the final one carries a full payload; the final block's payload is empty
/// only when it is the only block (an empty message), so every message has exactly one
/// encoding up to the random parts. Decryption rejects, with the same opaque error, any block
/// whose frame does not match: wrong message id (spliced from another message), wrong
/// index (reordered, dropped or duplicated), final flag on a block that is not last or
/// missing on the last (truncated or extended).
public enum MessageContainer {
    /// The 8-byte magic that starts every container.
    public static let magic: [UInt8] = [0x89, 0x52, 0x53, 0x41, 0x4B, 0x49, 0x54, 0x0A]
    /// The container format version this code writes and reads.
    public static let version: UInt8 = 1
    /// Padding scheme identifier for RSAES-PKCS1-v1_5.
    public static let paddingSchemePKCS1v15: UInt8 = 1
    /// Bytes in the header.
    public static let headerByteCount = 60
    /// Bytes of framing inside each block's plaintext.
    public static let frameByteCount = 17

    /// Payload bytes per block for a key with block size k: k - 11 - 17.
    public static func payloadByteCount(blockSize k: Int) -> Int { k - EMEPKCS1v15.overheadByteCount - frameByteCount }

    /// The parsed header of a container.
    public struct Header: Sendable, Equatable {
        /// Format version (1).
        public let version: UInt8
        /// Padding scheme (1 = RSAES-PKCS1-v1_5).
        public let paddingScheme: UInt8
        /// k, the block size in bytes.
        public let blockSize: Int
        /// SHA-256 of the recipient's SPKI DER, 32 bytes.
        public let recipientFingerprint: [UInt8]
        /// The random message id, 16 bytes.
        public let messageID: [UInt8]

        /// The 60 header bytes.
        public var bytes: [UInt8] {
            MessageContainer.magic + [version, paddingScheme, UInt8(blockSize >> 8), UInt8(blockSize & 0xFF)]
                + recipientFingerprint + messageID
        }

        /// Parse a header.
        /// - Parameter bytes: at least the first 60 bytes of the container.
        /// - Throws: `RSAError.containerInvalid` for a short input, a wrong magic, an
        ///   unknown version or padding scheme (these are public fields: the message says which).
        public init(parsing bytes: [UInt8]) throws {
            guard bytes.count >= headerByteCount else {
                throw RSAError.containerInvalid(reason: "input is shorter than the \(headerByteCount)-byte container header")
            }
            guard Array(bytes[0..<8]) == MessageContainer.magic else {
                throw RSAError.containerInvalid(reason: "not an rsakit container (wrong magic)")
            }
            guard bytes[8] == MessageContainer.version else {
                throw RSAError.containerInvalid(reason: "unsupported container version \(bytes[8]) (this rsakit reads version \(MessageContainer.version))")
            }
            guard bytes[9] == MessageContainer.paddingSchemePKCS1v15 else {
                throw RSAError.containerInvalid(reason: "unsupported padding scheme \(bytes[9])")
            }
            self.version = bytes[8]
            self.paddingScheme = bytes[9]
            self.blockSize = Int(bytes[10]) << 8 | Int(bytes[11])
            self.recipientFingerprint = Array(bytes[12..<44])
            self.messageID = Array(bytes[44..<60])
        }

        init(blockSize: Int, recipientFingerprint: [UInt8], messageID: [UInt8]) {
            self.version = MessageContainer.version
            self.paddingScheme = MessageContainer.paddingSchemePKCS1v15
            self.blockSize = blockSize
            self.recipientFingerprint = recipientFingerprint
            self.messageID = messageID
        }
    }

    /// True when `prefix` (the first bytes of an input) starts with the container magic.
    public static func hasMagic(_ prefix: [UInt8]) -> Bool {
        prefix.count >= magic.count && Array(prefix[0..<magic.count]) == magic
    }

    /// Encrypt a stream into a container for `key`.
    ///
    /// - Parameters:
    ///   - source: the plaintext, any length.
    ///   - sink: receives the 60-byte header, then ceil(max(1, length) / (k - 28)) blocks of k bytes.
    ///   - key: the recipient's public key; k must be at least 29 (a 232-bit modulus).
    ///   - random: source of the message id and padding.
    ///   - concurrency: worker threads.
    /// - Returns: the number of blocks written.
    /// - Throws: `RSAError.keySizeUnsupported` when k is too small; I/O errors of source or sink.
    @discardableResult
    public static func encrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPublicKey,
        random: RSARandomSource = SystemRandomSource(),
        concurrency: Int = PKCS1v15Chunking.defaultConcurrency
    ) throws -> UInt64 {
        let k = key.modulusByteCount
        let payload = payloadByteCount(blockSize: k)
        guard payload >= 1, k <= 0xFFFF else {
            throw RSAError.keySizeUnsupported(bits: key.modulusBitCount, reason: "unsuitable for the rsakit container")
        }
        let header = Header(blockSize: k, recipientFingerprint: key.fingerprint.bytes, messageID: random.bytes(16))
        try sink.write(header.bytes)
        let shortID = Array(header.messageID[0..<8])
        let pipeline = BlockPipeline(inputBlockSize: payload, concurrency: max(1, concurrency))
        let random = random
        return try pipeline.run(
            source: &source, sink: &sink, finalBlock: .mayBeShort, emitBlockForEmptyInput: true
        ) { block in
            var frame = shortID
            frame.reserveCapacity(frameByteCount + block.bytes.count)
            for shift in stride(from: 56, through: 0, by: -8) {
                frame.append(UInt8(truncatingIfNeeded: block.index >> UInt64(shift)))
            }
            frame.append(block.isFinal ? 0x01 : 0x00)
            frame.append(contentsOf: block.bytes)
            defer { wipe(&frame) }
            return try key.encrypt(frame, random: random)
        }.blockCount
    }

    /// Decrypt the blocks of a container whose header has already been read and checked.
    ///
    /// - Parameters:
    ///   - header: the parsed header; its k and recipient fingerprint must match `key`.
    ///     Callers that want a message naming the key compare
    ///     `key.publicKey.fingerprint.bytes` with `header.recipientFingerprint` first.
    ///   - source: positioned just after the header.
    ///   - sink: receives the payloads in order; on failure, discard what was written.
    ///   - key: the recipient's private key.
    /// - Returns: the number of blocks decrypted.
    /// - Throws: `RSAError.containerInvalid` when k or the fingerprint differs from the key's;
    ///   `RSAError.ciphertextLengthInvalid` for a body that is not whole blocks;
    ///   `RSAError.decryptionFailed` for any block that fails to decrypt or whose frame does
    ///   not match (one opaque error for all), including an empty body (no final block).
    @discardableResult
    public static func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        header: Header, from source: inout Source, to sink: inout Sink, with key: RSAPrivateKey,
        random: RSARandomSource = SystemRandomSource(),
        concurrency: Int = PKCS1v15Chunking.defaultConcurrency
    ) throws -> UInt64 {
        let k = key.modulusByteCount
        guard header.blockSize == k else {
            throw RSAError.containerInvalid(reason: "block size \(header.blockSize) does not match the key's \(k)")
        }
        // Checked before any private-key operation.
        guard header.recipientFingerprint == key.publicKey.fingerprint.bytes else {
            throw RSAError.containerInvalid(reason: "encrypted for another key")
        }
        if let total = source.remainingByteCount, total % k != 0 {
            throw RSAError.ciphertextLengthInvalid(byteCount: total, blockSize: k)
        }
        let shortID = Array(header.messageID[0..<8])
        let pipeline = BlockPipeline(inputBlockSize: k, concurrency: max(1, concurrency))
        let random = random
        let count = try pipeline.run(
            source: &source, sink: &sink, finalBlock: .mustBeComplete, emitBlockForEmptyInput: false
        ) { block in
            var frame = try key.decrypt(Array(block.bytes), random: random)
            defer { wipe(&frame) }
            guard frame.count >= frameByteCount else { throw RSAError.decryptionFailed }
            var index: UInt64 = 0
            for i in 8..<16 { index = index << 8 | UInt64(frame[i]) }
            let expectedFlags: UInt8 = block.isFinal ? 0x01 : 0x00
            let payloadCount = frame.count - frameByteCount
            // Frame checks. The frame is authenticated only by the block it sits in, so these
            // comparisons are on data an attacker can choose; all fail the same way.
            guard Array(frame[0..<8]) == shortID,
                  index == block.index,
                  frame[16] == expectedFlags,
                  block.isFinal || payloadCount == payloadByteCount(blockSize: k),
                  // An empty final block after full ones is not what encrypt writes (found by
                  // Fuzz/FuzzContainer: it decrypted, but re-encrypted to one block fewer).
                  payloadCount > 0 || block.index == 0
            else { throw RSAError.decryptionFailed }
            return Array(frame[frameByteCount...])
        }.blockCount
        // An empty body has no final block: truncated.
        guard count > 0 else { throw RSAError.decryptionFailed }
        return count
    }
}
