import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Decryption with a key store: the private key is the one whose fingerprint the container's
// header names (the store layer sits above Messages, so this extension lives here).

extension RSAMessage {
    /// Decrypt a stream whose private key is in `store`, found by the recipient fingerprint
    /// in the container header (armored or not).
    ///
    /// - Parameters: as ``decrypt(from:to:with:format:rawPadding:temporaryDirectory:)``, with
    ///   `store` instead of a key.
    /// - Throws: `RSAError.itemNotFound` (a private key with that fingerprint, see
    ///   ``recipientPrivateKey(in:fingerprint:)``) when the store has none; `RSAError.messageNamesNoRecipient` for
    ///   input that
    ///   is not a container (raw blocks, Apple's format); the store's errors; every error of
    ///   the key-taking form.
    public static func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, using store: RSAKeyStore,
        format: RSAMessageFormat? = nil, rawPadding: RSAEncryptionPadding = .pkcs1v15,
        temporaryDirectory: String? = nil
    ) throws {
        try decrypt(
            from: &source, to: &sink, format: format, rawPadding: rawPadding,
            temporaryDirectory: temporaryDirectory
        ) { fingerprint in
            guard let fingerprint else { throw RSAError.messageNamesNoRecipient }
            return try recipientPrivateKey(in: store, fingerprint: fingerprint)
        }
    }

    /// Decrypt a container held in memory with the key `store` holds for its recipient.
    /// - Returns: the plaintext. - Throws: as the streaming form.
    public static func decrypt(_ message: [UInt8], using store: RSAKeyStore) throws -> [UInt8] {
        var source = RSAArrayByteSource(message)
        var sink = RSAArrayByteSink()
        try decrypt(from: &source, to: &sink, using: store)
        return sink.bytes
    }

    /// Decrypt the container at `inputPath` into `outputPath` (written only on success) with
    /// the key `store` holds for its recipient.
    /// - Throws: as ``decryptFile(atPath:toPath:with:format:rawPadding:)`` and the streaming
    ///   store form.
    public static func decryptFile(atPath inputPath: String, toPath outputPath: String, using store: RSAKeyStore) throws
    {
        try withFiles(inputPath, outputPath) { source, sink, folder in
            try decrypt(from: &source, to: &sink, using: store, temporaryDirectory: folder)
        }
    }

    /// The private key in `store` whose public key has `fingerprint` (a container's
    /// ``RSAMessageContainer/Header/recipientFingerprint``).
    /// - Throws: `RSAError.itemNotFound` with the query (class key, key class private,
    ///   `publicKeyFingerprint`) when the store has no such private key (it may hold the
    ///   public half: ``RSAKeyStore/keyItems(fingerprint:)`` tells); or the store's errors
    ///   reading the item.
    public static func recipientPrivateKey(in store: RSAKeyStore, fingerprint: RSAKeyFingerprint) throws
        -> RSAPrivateKey
    {
        let items = try store.keyItems(fingerprint: fingerprint)
        guard let item = items.first(where: { $0.keyClass == .private }) else {
            throw RSAError.itemNotFound(
                RSAKeychainItemQuery(itemClass: .key, keyClass: .private, publicKeyFingerprint: fingerprint))
        }
        return try store.privateKey(tag: item.applicationTag)
    }
}
