// Foundation forms of the in-memory message calls that ``RSAMessage`` does not already
// cover: raw PKCS#1 v1.5 chunks, the container, Apple's format, armor, and the
// stream types. Operations take `Data` and return `Data` (a `Data` parameter, not
// `some DataProtocol`, so that `encrypt(Array(...))` keeps meaning the `[UInt8]` form);
// parsers accept any `DataProtocol`. Each forwards to the `[UInt8]` form documented beside
// it; behaviour, errors and constant-time status are that form's.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSAPKCS1v15Chunking {
    /// Encrypt `plaintext` held in `Data` into raw RSAES-PKCS1-v1_5 blocks; see
    /// ``encrypt(_:with:random:concurrency:)-([UInt8],_,_,_)``.
    /// - Parameters:
    ///   - plaintext: any length; empty gives empty output.
    ///   - key: the recipient's public key (k >= 12 bytes).
    ///   - random: source of the padding strings.
    ///   - concurrency: worker threads.
    /// - Returns: ceil(count / (k - 11)) * k bytes.
    /// - Throws: `RSAError.keySizeUnsupported` for k < 12.
    public static func encrypt(
        _ plaintext: Data, with key: RSAPublicKey,
        random: RSARandomSource = SystemRandomSource(), concurrency: Int = defaultConcurrency
    ) throws -> Data {
        Data(try encrypt([UInt8](plaintext), with: key, random: random, concurrency: concurrency))
    }

    /// Decrypt raw k-byte RSAES-PKCS1-v1_5 blocks held in `Data`; see
    /// ``decrypt(_:with:random:concurrency:)-([UInt8],_,_,_)``.
    /// - Parameters:
    ///   - ciphertext: a multiple of k bytes (checked before any private-key operation).
    ///   - key: the private key.
    ///   - random: source of blinding factors.
    ///   - concurrency: worker threads.
    /// - Returns: the concatenated plaintexts.
    /// - Throws: `RSAError.ciphertextLengthInvalid`; `RSAError.decryptionFailed` (opaque) for
    ///   any bad block. Each block is decrypted in constant time, blinded and checked.
    public static func decrypt(
        _ ciphertext: Data, with key: RSAPrivateKey,
        random: RSARandomSource = SystemRandomSource(), concurrency: Int = defaultConcurrency
    ) throws -> Data {
        Data(try decrypt([UInt8](ciphertext), with: key, random: random, concurrency: concurrency))
    }
}

extension RSAMessageContainer {
    /// Encrypt `plaintext` held in `Data` into a version 2 container; see
    /// ``encrypt(_:to:padding:random:)-([UInt8],_,_,_)``.
    /// - Returns: the whole container (64 + blocks * k bytes).
    /// - Throws: as the `[UInt8]` form (`RSAError.keySizeUnsupported` when a block cannot
    ///   carry a frame and one byte).
    public static func encrypt(
        _ plaintext: Data, to key: RSAPublicKey, padding: RSAEncryptionPadding = .pkcs1v15,
        random: RSARandomSource = SystemRandomSource()
    ) throws -> Data {
        Data(try encrypt([UInt8](plaintext), to: key, padding: padding, random: random))
    }

    /// Decrypt a whole container (version 1 or 2) held in `Data`; see
    /// ``decrypt(_:with:)-([UInt8],_)``. Nothing is returned unless every block checks.
    /// - Returns: the plaintext.
    /// - Throws: `RSAError.containerInvalid`, `RSAError.encryptedForAnotherKey(expected:)`,
    ///   `RSAError.decryptionFailed` (opaque), as the `[UInt8]` form.
    public static func decrypt(_ container: Data, with key: RSAPrivateKey) throws -> Data {
        Data(try decrypt([UInt8](container), with: key))
    }

    /// True when `prefix` (the first bytes of an input, in `Data`) starts with the container
    /// magic; see ``hasMagic(_:)-([UInt8])``.
    public static func hasMagic(_ prefix: Data) -> Bool {
        hasMagic([UInt8](prefix))
    }
}

extension RSAMessageContainer.Header {
    /// Parse a header from `Data`; see ``init(parsing:)-([UInt8])``.
    /// - Parameter bytes: at least the first ``byteCount`` bytes of the container (60 for
    ///   version 1, 64 for version 2), in any `DataProtocol`; later bytes are ignored.
    /// - Throws: `RSAError.containerInvalid`, as the `[UInt8]` form.
    public init(parsing bytes: some DataProtocol) throws {
        try self.init(parsing: [UInt8](bytes))
    }
}

extension RSAAppleAESGCM {
    /// Encrypt `plaintext` held in `Data` in Apple's RSA-OAEP + AES-GCM format; see
    /// ``encrypt(_:to:hash:random:)-([UInt8],_,_,_)``.
    /// - Returns: k + count + 16 bytes.
    /// - Throws: as the `[UInt8]` form.
    public static func encrypt(
        _ plaintext: Data, to key: RSAPublicKey, hash: RSAHashAlgorithm = .sha256,
        random: RSARandomSource = SystemRandomSource()
    ) throws -> Data {
        Data(try encrypt([UInt8](plaintext), to: key, hash: hash, random: random))
    }

    /// Decrypt Apple's RSA-OAEP + AES-GCM format held in `Data`; returns only after the tag
    /// has been verified. See ``decrypt(_:with:hash:)-([UInt8],_,_)``.
    /// - Returns: count - k - 16 bytes.
    /// - Throws: as the `[UInt8]` form (`RSAError.decryptionFailed`, opaque, for a bad key
    ///   block or tag).
    public static func decrypt(_ ciphertext: Data, with key: RSAPrivateKey, hash: RSAHashAlgorithm = .sha256) throws
        -> Data
    {
        Data(try decrypt([UInt8](ciphertext), with: key, hash: hash))
    }
}

extension RSAArmor {
    /// Armor `bytes` held in `Data`; see ``encode(_:)-([UInt8])``.
    /// - Returns: one BEGIN line, 64-column base64 lines and one END line, each ending "\n".
    public static func encode(_ bytes: Data) -> String {
        encode([UInt8](bytes))
    }

    /// Decode the first armor block found in `text` (UTF-8 bytes held in `Data`); see
    /// ``decode(_:)-([UInt8])``.
    /// - Returns: the armored bytes.
    /// - Throws: `RSAError.messageInvalid`, as the `[UInt8]` form.
    public static func decode(_ text: Data) throws -> Data {
        Data(try decode([UInt8](text)))
    }
}

extension RSAMessage {
    /// The recipient fingerprint a container (or armored container) held in `Data` names in
    /// its header; nil for other input. See ``recipientFingerprint(of:)-([UInt8])``.
    public static func recipientFingerprint(of message: Data) -> RSAKeyFingerprint? {
        recipientFingerprint(of: [UInt8](message))
    }
}

extension RSAByteSink {
    /// Write all of `data` (``write(_:)-([UInt8])`` with its bytes).
    /// - Throws: any I/O error of the sink, passed through unchanged.
    public mutating func write(_ data: Data) throws {
        try write([UInt8](data))
    }
}

extension RSAArrayByteSource {
    /// A source that yields the bytes of `data` and then end of input.
    public init(_ data: Data) {
        self.init([UInt8](data))
    }
}
