#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One call per job: encrypt to a public key in a chosen format, decrypt with a private key
/// (or, see the key store's extension, with a store that finds the key by the container's
/// fingerprint), detecting the format. What `rsakit encrypt` and `rsakit decrypt` do.
///
/// Formats (``RSAMessageFormat``): the rsakit container (default; version 2, resists forged
/// blocks, optionally ASCII-armored), raw k-byte blocks (PKCS#1 v1.5 or OAEP), and Apple's
/// RSA-OAEP + AES-GCM. Decryption detects a container, armored or not; anything else is raw
/// blocks unless the caller names a format. Apple's format is read only when named.
///
/// Streaming forms keep memory bounded. When they fail part-way, what was already written to
/// the sink must be discarded (the container and raw blocks stream; Apple's format writes
/// nothing before its tag checks). The file forms write the output only on success.
public enum RSAMessage {
    // MARK: Encryption

    /// Encrypt a stream to `key` in `format`.
    ///
    /// - Parameters:
    ///   - source: the plaintext, any length.
    ///   - sink: receives the message: a container (64-byte header, k-byte blocks), its armor,
    ///     raw k-byte blocks, or Apple's k + length + 16 bytes.
    ///   - key: the recipient's public key.
    ///   - format: default `.container()` (PKCS#1 v1.5 padding).
    ///   - random: the OS generator by default.
    /// - Throws: `RSAError.messageFormatUnsupported` (armor on a non-container, an OAEP label in
    ///   the container, a hash Apple's format lacks); `RSAError.keySizeUnsupported` when the key
    ///   is too small for the format and padding; `RSAError.keyRestricted` for an
    ///   id-RSASSA-PSS key (before anything is read or written); I/O errors of source and sink.
    public static func encrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, for key: RSAPublicKey,
        format: RSAMessageFormat = .container(), random: RSARandomSource = SystemRandomSource()
    ) throws {
        try key.requireEncryptionAllowed()
        switch format.kind {
        case .container:
            if format.armored {
                var armored = RSAArmorEncodingSink(sink)
                try RSAMessageContainer.encrypt(
                    from: &source, to: &armored, with: key, padding: format.padding, random: random)
                try armored.finish()
                sink = armored.inner
            } else {
                try RSAMessageContainer.encrypt(
                    from: &source, to: &sink, with: key, padding: format.padding, random: random)
            }
        case .raw:
            // Empty input is one block of the empty message, as openssl pkeyutl and
            // SecKeyEncrypt give (a zero-length output would not be a ciphertext at all).
            var reader = PrefixedByteSource(prefix: try source.readFully(1), inner: source)
            if reader.prefix.isEmpty {
                try sink.write(try key.encrypt([], padding: format.padding, random: random))
            } else {
                try RSARawBlocks.encrypt(from: &reader, to: &sink, with: key, padding: format.padding, random: random)
            }
        case .appleAESGCM:
            try RSAAppleAESGCM.encrypt(from: &source, to: &sink, with: key, hash: format.appleHash, random: random)
        }
    }

    /// Encrypt bytes held in memory. - Returns: the whole message. - Throws: as the streaming form.
    public static func encrypt(
        _ plaintext: [UInt8], for key: RSAPublicKey, format: RSAMessageFormat = .container(),
        random: RSARandomSource = SystemRandomSource()
    ) throws -> [UInt8] {
        var source = RSAArrayByteSource(plaintext)
        var sink = RSAArrayByteSink()
        try encrypt(from: &source, to: &sink, for: key, format: format, random: random)
        return sink.bytes
    }

    // MARK: Decryption

    /// Decrypt a stream with `key`.
    ///
    /// - Parameters:
    ///   - source: the message.
    ///   - sink: receives the plaintext (discard it on failure, except for Apple's format,
    ///     which writes only after its tag checks).
    ///   - key: the recipient's private key.
    ///   - format: nil (default) detects: a container (by its magic; any padding, from its
    ///     header), armor around a container (even after leading text), else raw blocks with
    ///     `rawPadding`. `.rawBlocks(padding:)` reads raw blocks even if the input looks like a
    ///     container; `.container()` refuses anything else; `.appleAESGCM(hash:)` reads Apple's format.
    ///   - rawPadding: the padding of raw blocks found by detection (default PKCS#1 v1.5).
    ///   - temporaryDirectory: where Apple's format keeps the unauthenticated plaintext
    ///     (default `$TMPDIR`, else `/tmp`).
    /// - Throws: `RSAError.encryptedForAnotherKey` carrying the container's recipient
    ///   fingerprint (before any private-key operation); `RSAError.decryptionFailed` for
    ///   every failure an attacker can cause (a bad block, forged or moved blocks, a changed
    ///   header byte, the wrong padding or hash, a wrong tag); `RSAError.containerInvalid`
    ///   for a bad container header; `RSAError.messageInvalid` for empty input, bad armor, or
    ///   raw input that is not whole k-byte blocks; I/O errors.
    public static func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPrivateKey,
        format: RSAMessageFormat? = nil, rawPadding: RSAEncryptionPadding = .pkcs1v15,
        temporaryDirectory: String? = nil
    ) throws {
        try decrypt(
            from: &source, to: &sink, format: format, rawPadding: rawPadding,
            temporaryDirectory: temporaryDirectory
        ) { _ in key }
    }

    /// Decrypt bytes held in memory; nothing is returned unless the whole message checks.
    /// - Returns: the plaintext. - Throws: as the streaming form.
    public static func decrypt(
        _ message: [UInt8], with key: RSAPrivateKey, format: RSAMessageFormat? = nil,
        rawPadding: RSAEncryptionPadding = .pkcs1v15
    ) throws -> [UInt8] {
        if format?.kind == .appleAESGCM {
            return try RSAAppleAESGCM.decrypt(message, with: key, hash: format!.appleHash)
        }
        var source = RSAArrayByteSource(message)
        var sink = RSAArrayByteSink()
        try decrypt(from: &source, to: &sink, with: key, format: format, rawPadding: rawPadding)
        return sink.bytes
    }

    /// The recipient fingerprint a container (or armored container) names in its header;
    /// nil for other input.
    public static func recipientFingerprint(of message: [UInt8]) -> RSAKeyFingerprint? {
        guard let reader = try? MessageReader(RSAArrayByteSource(message)),
            case let .container(header) = reader.detected
        else { return nil }
        return header.recipientFingerprint
    }

    /// Decrypt a stream with a key chosen once the input has been read far enough to know
    /// whom it is for: `key` is called once, with the container's recipient fingerprint, or
    /// with nil when the input names no key (raw blocks, Apple's format). This is how the CLI
    /// looks a key up in a store only when the input is a container.
    ///
    /// - Parameters: as ``decrypt(from:to:with:format:rawPadding:temporaryDirectory:)``;
    ///   `key` returns the private key (or throws, and its error is passed through).
    /// - Throws: as the key-taking form, and whatever `key` throws.
    public static func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, format: RSAMessageFormat? = nil,
        rawPadding: RSAEncryptionPadding = .pkcs1v15, temporaryDirectory: String? = nil,
        key chooseKey: (RSAKeyFingerprint?) throws -> RSAPrivateKey
    ) throws {
        // An id-RSASSA-PSS key is refused as soon as it is chosen, before any output.
        func key(_ fingerprint: RSAKeyFingerprint?) throws -> RSAPrivateKey {
            let chosen = try chooseKey(fingerprint)
            try chosen.publicKey.requireEncryptionAllowed()
            return chosen
        }
        switch format?.kind {
        case .appleAESGCM:
            try RSAAppleAESGCM.decrypt(
                from: &source, to: &sink, with: try key(nil), hash: format!.appleHash,
                temporaryDirectory: temporaryDirectory)
            return
        case .raw:
            let privateKey = try key(nil)
            var reader = PrefixedByteSource(prefix: try source.readFully(1), inner: source)
            if reader.prefix.isEmpty {
                throw RSAError.messageInvalid(reason: "no ciphertext blocks: the input is empty")
            }
            try RSARawBlocks.decrypt(
                from: &reader, to: &sink, with: privateKey, padding: format!.padding,
                rejection: format!.rejection)
            return
        case .container, nil:
            break
        }
        let reader = try MessageReader(source)
        var body = reader.source
        if case let .container(header) = reader.detected {
            try RSAMessageContainer.decrypt(
                header: header, from: &body, to: &sink,
                with: try key(header.recipientFingerprint))
            return
        }
        if format?.kind == .container {
            throw RSAError.containerInvalid(reason: "not an rsakit container (wrong magic)")
        }
        if reader.isEmpty {
            throw RSAError.messageInvalid(reason: "input is empty: nothing to decrypt")
        }
        let privateKey = try key(nil)
        do {
            try RSARawBlocks.decrypt(from: &body, to: &sink, with: privateKey, padding: rawPadding)
        } catch let RSAError.ciphertextLengthInvalid(byteCount, blockSize) {
            throw RSAError.messageInvalid(
                reason: "input is neither an rsakit container (no magic) nor whole raw blocks: "
                    + "\(byteCount) bytes is not a multiple of the block size \(blockSize) bytes")
        }
    }
}
