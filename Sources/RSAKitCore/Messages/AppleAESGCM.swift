/// Apple's RSA-OAEP + AES-GCM hybrid encryption, what `SecKeyCreateEncryptedData` produces
/// with `kSecKeyAlgorithmRSAEncryptionOAEPSHA{1,224,256,384,512}AESGCM`, for data of any length.
///
///     output = RSAES-OAEP(session key)   k bytes; OAEP hash = MGF1 hash = the named SHA,
///                                        empty label (RFC 8017 §7.1)
///            || AES-GCM ciphertext       as long as the plaintext (NIST SP 800-38D)
///            || tag                      16 bytes
///
/// The session key is AES-128 (16 bytes) below 4096-bit moduli and AES-256 (32 bytes) from
/// 4096 bits up; decryption refuses a session key of the other size, as Apple's does
/// ("RSA-WRAP bad ciphertext, unexpected session key size"). The IV is 16 zero bytes (safe
/// only because every message has a fresh session key); the additional authenticated data
/// is the recipient's public key as PKCS#1 `RSAPublicKey` DER. There is no header: the
/// reader must be told the format and the hash. Source: Apple's `SecKeyAdaptors`
/// (`SecKeyRSAAESGCMCopyEncryptedData` / `...DecryptedData`).
public enum RSAAppleAESGCM {
    /// The hashes Apple defines for this format: SHA-1, SHA-224, SHA-256, SHA-384, SHA-512.
    public static let supportedHashes: [RSAHashAlgorithm] = [.sha1, .sha224, .sha256, .sha384, .sha512]

    /// The 16 zero bytes Apple uses as the GCM IV.
    static let iv = [UInt8](repeating: 0, count: 16)

    /// Session key length in bytes for a modulus of `modulusBitCount` bits: 16 below 4096, else 32.
    public static func sessionKeyByteCount(modulusBitCount: Int) -> Int {
        modulusBitCount >= 4096 ? 32 : 16
    }

    /// The OAEP parameters of the key wrap: hash and MGF1 hash `hash`, empty label.
    static func padding(_ hash: RSAHashAlgorithm) throws -> RSAEncryptionPadding {
        guard supportedHashes.contains(hash) else {
            throw RSAError.messageFormatUnsupported(
                reason:
                    "Apple's RSA-OAEP + AES-GCM is defined for sha1, sha224, sha256, sha384 and sha512, not "
                    + "\(hash.rawValue)"
            )
        }
        return .oaep(RSAOAEPParameters(hash: hash, mgf1Hash: hash, label: []))
    }

    /// Encrypt a stream. Output is streamed: the wrapped key first, then the ciphertext in
    /// 64 KiB pieces, then the tag.
    ///
    /// - Parameters:
    ///   - source: the plaintext, any length (including empty).
    ///   - sink: receives k + length + 16 bytes.
    ///   - key: the recipient's public key.
    ///   - hash: the algorithm's SHA (default SHA-256, `...OAEPSHA256AESGCM`).
    ///   - random: the source of the session key and the OAEP seed (default: the OS).
    /// - Throws: `RSAError.messageFormatUnsupported` for a hash Apple does not define;
    ///   `RSAError.keySizeUnsupported` when one OAEP block cannot carry the session key;
    ///   I/O errors of source or sink.
    public static func encrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPublicKey,
        hash: RSAHashAlgorithm = .sha256, random: RSARandomSource = SystemRandomSource()
    ) throws {
        let padding = try padding(hash)
        let keyCount = sessionKeyByteCount(modulusBitCount: key.modulusBitCount)
        guard key.maximumMessageByteCount(padding: padding) >= keyCount else {
            throw RSAError.keySizeUnsupported(
                bits: key.modulusBitCount,
                reason: "too small to wrap a \(keyCount)-byte session key with OAEP \(hash.rawValue)")
        }
        let sessionKey = SecretBytes(random: random, count: keyCount)
        var keyCopy = sessionKey.array
        defer { wipe(&keyCopy) }
        try sink.write(try key.encrypt(keyCopy, padding: padding, random: random))
        let gcm = AESGCMContext(key: sessionKey, iv: iv, authenticatedData: key.pkcs1DERRepresentation)
        while true {
            // Pieces are multiples of 16 bytes except the last, as GCM requires.
            var piece = try source.readFully(1 << 16)
            defer { wipe(&piece) }
            if !piece.isEmpty { try sink.write(gcm.encrypt(piece)) }
            if piece.count < 1 << 16 { break }
        }
        try sink.write(gcm.tag())
    }

    /// Decrypt a stream. Nothing reaches `sink` before the tag has been verified: the
    /// plaintext goes to a 0600 temporary file, unlinked at once (`PlaintextSpool`), and is
    /// copied to `sink` only after the tag checks; memory stays bounded (64 KiB pieces).
    ///
    /// - Parameters:
    ///   - source: the ciphertext (at least k + 16 bytes).
    ///   - sink: receives the plaintext, only on success.
    ///   - key: the recipient's private key.
    ///   - hash: the SHA the sender used.
    ///   - temporaryDirectory: where the temporary file goes (default `$TMPDIR`, else `/tmp`).
    /// - Throws: `RSAError.messageInvalid` for input shorter than k + 16 bytes (public);
    ///   `RSAError.decryptionFailed` for a wrong key, wrong hash, wrong session key size or
    ///   wrong tag (one opaque error); `RSAError.messageFormatUnsupported` for a hash Apple
    ///   does not define; I/O errors of source, sink or the temporary file.
    /// - Note: RSADP is blinded and constant-time; OAEP decoding does not branch on secret
    ///   data; the tag is compared in constant time (Nettle's `memeql_sec`).
    public static func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPrivateKey,
        hash: RSAHashAlgorithm = .sha256, temporaryDirectory: String? = nil
    ) throws {
        let padding = try padding(hash)
        if let total = source.remainingByteCount { try checkLength(total, key) }
        let spool = try PlaintextSpool(directory: temporaryDirectory)
        try decrypt(&source, key, padding) { try spool.write($0) }
        try spool.copy(to: &sink)
    }

    /// The streaming decryption with the session key unwrapped elsewhere: by a key on a
    /// token or in the TPM, whose RSAES-OAEP decryption `unwrap` runs (one private operation
    /// for the whole message). As ``decrypt(from:to:with:hash:temporaryDirectory:)`` otherwise.
    /// - Parameters: `publicKey` the recipient's public key (k, and the AES-GCM associated
    ///   data); `unwrap` decrypts the k-byte wrapped key with the given OAEP padding.
    /// - Throws: as the key form; any failure of `unwrap` becomes `RSAError.decryptionFailed`.
    package static func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, publicKey: RSAPublicKey, hash: RSAHashAlgorithm = .sha256,
        temporaryDirectory: String? = nil, unwrap: ([UInt8], RSAEncryptionPadding) throws -> [UInt8]
    ) throws {
        let padding = try padding(hash)
        if let total = source.remainingByteCount { try checkLength(total, publicKey) }
        let spool = try PlaintextSpool(directory: temporaryDirectory)
        try decrypt(&source, publicKey, padding, unwrap: unwrap) { try spool.write($0) }
        try spool.copy(to: &sink)
    }

    /// Encrypt `plaintext` held in memory.
    /// - Returns: k + count + 16 bytes. - Throws: as the streaming form.
    public static func encrypt(
        _ plaintext: [UInt8], to key: RSAPublicKey, hash: RSAHashAlgorithm = .sha256,
        random: RSARandomSource = SystemRandomSource()
    ) throws -> [UInt8] {
        var source = RSAArrayByteSource(plaintext)
        var sink = RSAArrayByteSink()
        try encrypt(from: &source, to: &sink, with: key, hash: hash, random: random)
        return sink.bytes
    }

    /// Decrypt `ciphertext` held in memory; returns only after the tag has been verified.
    /// - Returns: count - k - 16 bytes. - Throws: as the streaming form.
    public static func decrypt(
        _ ciphertext: [UInt8], with key: RSAPrivateKey, hash: RSAHashAlgorithm = .sha256
    ) throws -> [UInt8] {
        let padding = try padding(hash)
        try checkLength(ciphertext.count, key)
        var source = RSAArrayByteSource(ciphertext)
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(ciphertext.count)
        do {
            try decrypt(&source, key, padding) { plaintext += $0 }
        } catch {
            wipe(&plaintext)
            throw error
        }
        return plaintext
    }

    private static func checkLength(_ count: Int, _ key: RSAPrivateKey) throws {
        try checkLength(count, key.publicKey)
    }

    private static func checkLength(_ count: Int, _ key: RSAPublicKey) throws {
        let minimum = key.modulusByteCount + AESGCMContext.tagByteCount
        guard count >= minimum else {
            throw RSAError.messageInvalid(
                reason:
                    "Apple RSA-OAEP + AES-GCM input is \(count) bytes, shorter than the \(minimum) bytes of an empty "
                    + "message for this key"
            )
        }
    }

    /// The decryption proper: unwrap the session key, decrypt the body into `write` (whose
    /// bytes are unauthenticated until this returns), check the tag.
    private static func decrypt<Source: RSAByteSource>(
        _ source: inout Source, _ key: RSAPrivateKey, _ padding: RSAEncryptionPadding,
        write: ([UInt8]) throws -> Void
    ) throws {
        try decrypt(&source, key.publicKey, padding, unwrap: { try key.decrypt($0, padding: $1) }, write: write)
    }

    /// As above, the RSA decryption of the wrapped session key done by `unwrap`.
    private static func decrypt<Source: RSAByteSource>(
        _ source: inout Source, _ publicKey: RSAPublicKey, _ padding: RSAEncryptionPadding,
        unwrap: ([UInt8], RSAEncryptionPadding) throws -> [UInt8], write: ([UInt8]) throws -> Void
    ) throws {
        let key = publicKey
        let k = key.modulusByteCount
        let wrapped = try source.readFully(k)
        guard wrapped.count == k else {
            throw RSAError.messageInvalid(reason: "Apple RSA-OAEP + AES-GCM input is shorter than one \(k)-byte block")
        }
        var unwrapped: [UInt8]
        do {
            unwrapped = try unwrap(wrapped, padding)
        } catch let error as RSAError {
            switch error {
            // A token or TPM that cannot be reached says nothing about the ciphertext.
            case .tokenUnavailable, .tokenPINIncorrect, .tpmUnavailable, .tpmLockedOut, .tpmKeyLost: throw error
            default: throw RSAError.decryptionFailed
            }
        } catch {
            throw RSAError.decryptionFailed
        }
        defer { wipe(&unwrapped) }
        // Apple refuses a session key of the other size (errSecParam); here it is the same
        // opaque failure as a bad tag. The length is checked after the OAEP check, which
        // took the same time whatever the key.
        guard unwrapped.count == sessionKeyByteCount(modulusBitCount: key.modulusBitCount) else {
            throw RSAError.decryptionFailed
        }
        let gcm = AESGCMContext(
            key: SecretBytes(copying: unwrapped), iv: iv,
            authenticatedData: key.pkcs1DERRepresentation)
        let tagCount = AESGCMContext.tagByteCount
        var pending: [UInt8] = []
        while true {
            let piece = try source.read(upTo: 1 << 16)
            if piece.isEmpty { break }
            pending += piece
            // Keep the last 16 bytes back (they may be the tag); decrypt whole GCM blocks.
            let ready = (pending.count - tagCount) / 16 * 16
            if ready > 0 {
                var plain = gcm.decrypt(Array(pending[0..<ready]))
                try write(plain)
                wipe(&plain)
                pending.removeFirst(ready)
            }
        }
        guard pending.count >= tagCount else {
            throw RSAError.messageInvalid(reason: "Apple RSA-OAEP + AES-GCM input ends before its 16-byte tag")
        }
        var plain = gcm.decrypt(Array(pending[0..<(pending.count - tagCount)]))
        try write(plain)
        wipe(&plain)
        guard AESGCMContext.tagsEqual(gcm.tag(), Array(pending.suffix(tagCount))) else {
            throw RSAError.decryptionFailed
        }
    }
}
