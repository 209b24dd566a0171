import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The calls that read and write encrypted key files: GnuTLS decrypts and encrypts (PBES1,
// PBES2 with PBKDF2, PKCS#12 PBE, OpenSSL's legacy PEM), RSAKitCore's reader names the scheme
// and parses the plain key. They live in this layer because it is the one that links GnuTLS.

/// The GnuTLS decryption behind RSAKitCore's key file reader.
struct GnuTLSKeyFileDecryptor: RSAKeyFileDecryptor {
    func decryptPKCS8(der: [UInt8], passphrase: [UInt8], what: String, encryption: RSAKeyFileEncryption) throws
        -> [UInt8]
    {
        try plainDER(what: what, encryption: encryption) {
            try GnuTLSPrivateKey.decryptPKCS8(der: der, passphrase: passphrase)
        }
    }

    func decryptOpenSSLPEM(_ pem: [UInt8], passphrase: [UInt8], what: String, encryption: RSAKeyFileEncryption) throws
        -> [UInt8]
    {
        try plainDER(what: what, encryption: encryption) {
            try GnuTLSPrivateKey.decryptOpenSSLPEM(pem, passphrase: passphrase)
        }
    }

    /// The decrypted key as PKCS#8 DER, GnuTLS's failures as the `RSAError` a caller acts on.
    private func plainDER(
        what: String, encryption: RSAKeyFileEncryption,
        _ decrypt: () throws -> GnuTLSPrivateKey
    ) throws -> [UInt8] {
        let key: GnuTLSPrivateKey
        do {
            key = try decrypt()
        } catch let failure as GnuTLSFailure {
            throw Self.mapFailure(failure, what: what, encryption: encryption)
        }
        do {
            return try key.plainPKCS8DER()
        } catch let failure as GnuTLSFailure {
            throw RSAError.internalError("GnuTLS could not export the decrypted key: \(failure)")
        }
    }

    private static func mapFailure(_ failure: GnuTLSFailure, what: String, encryption: RSAKeyFileEncryption) -> RSAError
    {
        if GnuTLSPrivateKey.isUnsupportedScheme(failure) {
            return .unsupportedKeyFormat(
                reason:
                    "\(what) encrypted with \(encryption) is not supported (GnuTLS: \(failure.message.lowercased()))")
        }
        if GnuTLSPrivateKey.isUnusablePassphrase(failure) {
            return .passphraseUnusable(reason: "GnuTLS refuses it as a password string (not valid UTF-8)")
        }
        if GnuTLSPrivateKey.isWrongPassphrase(failure) {
            return .passphraseIncorrect(what: what)
        }
        return .malformedKey(reason: "\(what) could not be decrypted: \(failure.message.lowercased())")
    }
}

extension RSAKeyFile {
    /// Read a key file that may be encrypted: as ``init(bytes:)-([UInt8])``, and an encrypted PKCS#8
    /// `EncryptedPrivateKeyInfo` (RFC 5208 §6; DER or PEM "ENCRYPTED PRIVATE KEY") or an
    /// OpenSSL legacy encrypted PEM ("Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-256-CBC,...")
    /// is decrypted by GnuTLS with `passphrase`, and the plain key parsed by RSAKit.
    /// A plain file is read as it is, whatever `passphrase` says.
    ///
    /// Decryption is GnuTLS's (PBKDF2, AES/3DES/DES/RC2/RC4, EVP_BytesToKey), except PBES2 with
    /// RC2-CBC, which RSAKit decrypts with Nettle's PBKDF2 and RC2 (read only); the plain key
    /// bytes are wiped after parsing (best effort), as are RSAKit's copies of `passphrase`.
    /// - Parameter passphrase: the passphrase's bytes (UTF-8 for text), nil for none.
    /// - Throws: every error of ``init(bytes:)-([UInt8])``; `RSAError.passphraseNeeded(what:)` for an
    ///   encrypted file without a passphrase, `RSAError.passphraseIncorrect(what:)` when it
    ///   does not decrypt, `RSAError.passphraseUnusable` (NUL byte),
    ///   `RSAError.unsupportedKeyFormat` naming scrypt or a cipher GnuTLS lacks.
    public init(bytes: [UInt8], passphrase: [UInt8]?) throws {
        try self.init(
            bytes: bytes, requirePEM: false, preferring: nil, passphrase: passphrase,
            decryptor: GnuTLSKeyFileDecryptor())
    }

    /// Read a key file that may be encrypted, held in `Data`; see
    /// ``init(bytes:passphrase:)-([UInt8],[UInt8]?)``. RSAKit's copies of the file and the
    /// passphrase are wiped (best effort).
    /// - Parameters:
    ///   - bytes: PEM or DER, at most ``maximumByteCount`` bytes, in any `DataProtocol`.
    ///   - passphrase: the passphrase's bytes (UTF-8 for text), nil for none.
    /// - Throws: every error of the `[UInt8]` form.
    public init(bytes: some DataProtocol, passphrase: (some DataProtocol)?) throws {
        var copy = [UInt8](bytes)
        var secret = passphrase.map { [UInt8]($0) }
        defer {
            wipe(&copy)
            if secret != nil { wipe(&secret!) }
        }
        try self.init(bytes: copy, passphrase: secret)
    }
}

extension RSAPrivateKey {
    /// Read a private key from PEM text that may be encrypted (PKCS#8 "ENCRYPTED PRIVATE
    /// KEY" or OpenSSL "Proc-Type: 4,ENCRYPTED"), decrypted by GnuTLS with `passphrase`.
    /// - Throws: every error of ``RSAKeyFile/init(bytes:passphrase:)-([UInt8],[UInt8]?)``, and
    ///   `RSAError.keyTypeMismatch` for a public key.
    public init(pemRepresentation: String, passphrase: [UInt8]?) throws {
        var bytes = Array(pemRepresentation.utf8)
        defer { wipe(&bytes) }
        let file = try RSAKeyFile(
            bytes: bytes, requirePEM: true, preferring: .privateKey, passphrase: passphrase,
            decryptor: GnuTLSKeyFileDecryptor())
        guard let key = file.privateKey else {
            throw RSAError.keyTypeMismatch(expected: "a private key", found: "a public key (\(file.structureName))")
        }
        self = key
    }

    /// Read a private key from PEM text that may be encrypted, with the passphrase held in
    /// `Data` (or any `DataProtocol`); see ``init(pemRepresentation:passphrase:)-(_,[UInt8]?)``.
    /// - Parameters:
    ///   - pemRepresentation: the PEM text (plain or encrypted private key).
    ///   - passphrase: the passphrase's bytes (UTF-8 for text), nil for none. RSAKit's copy is
    ///     wiped.
    /// - Throws: every error of ``RSAKeyFile/init(bytes:passphrase:)-([UInt8],[UInt8]?)``, and
    ///   `RSAError.keyTypeMismatch` for a public key.
    public init(pemRepresentation: String, passphrase: (some DataProtocol)?) throws {
        var secret = passphrase.map { [UInt8]($0) }
        defer { if secret != nil { wipe(&secret!) } }
        try self.init(pemRepresentation: pemRepresentation, passphrase: secret)
    }

    /// ``encryptedPKCS8DERRepresentation(passphrase:)-([UInt8])`` (PBES2, PBKDF2-HMAC-SHA256,
    /// AES-256-CBC) with the passphrase held in `Data`.
    /// - Parameter passphrase: the passphrase's bytes (UTF-8 for text), not empty, no NUL.
    ///   RSAKit's copies are wiped.
    /// - Returns: the PKCS#8 `EncryptedPrivateKeyInfo` DER.
    /// - Throws: `RSAError.passphraseUnusable`, `RSAError.internalError`, as the `[UInt8]` form.
    public func encryptedPKCS8DERRepresentation(passphrase: Data) throws -> Data {
        var secret = [UInt8](passphrase)
        defer { wipe(&secret) }
        return Data(try encryptedPKCS8DERRepresentation(passphrase: secret))
    }

    /// ``encryptedPKCS8PEMRepresentation(passphrase:)-([UInt8])`` with the passphrase held in
    /// `Data`: "-----BEGIN ENCRYPTED PRIVATE KEY-----".
    /// - Throws: as ``encryptedPKCS8DERRepresentation(passphrase:)-([UInt8])``.
    public func encryptedPKCS8PEMRepresentation(passphrase: Data) throws -> String {
        var secret = [UInt8](passphrase)
        defer { wipe(&secret) }
        return try encryptedPKCS8PEMRepresentation(passphrase: secret)
    }

    /// The private key as PKCS#8 `EncryptedPrivateKeyInfo` DER with PBES2 (RFC 8018 §6.2):
    /// PBKDF2 with HMAC-SHA256, a random salt and 600,000 iterations (GnuTLS 3.7.9's
    /// default, checked: never fewer), AES-256-CBC with a random IV; what
    /// `openssl pkey -passin` reads. Made by GnuTLS (`gnutls_x509_privkey_export2_pkcs8`
    /// with GNUTLS_PKCS_PBES2_AES_256); salt and IV come from GnuTLS's random generator.
    ///
    /// - Parameter passphrase: the passphrase's bytes (UTF-8 for text), not empty, no NUL.
    ///   RSAKit's copies are wiped.
    /// - Throws: `RSAError.passphraseUnusable` (empty, NUL byte, or not valid UTF-8 for
    ///   GnuTLS), `RSAError.internalError` when GnuTLS fails.
    public func encryptedPKCS8DERRepresentation(passphrase: [UInt8]) throws -> [UInt8] {
        guard !passphrase.isEmpty else {
            throw RSAError.passphraseUnusable(reason: "an empty passphrase does not protect the key")
        }
        var plain = pkcs8DERRepresentation
        defer { wipe(&plain) }
        let encrypted: [UInt8]
        do {
            let key = try GnuTLSPrivateKey.plain(der: plain)
            encrypted = try key.pbes2AES256DER(passphrase: passphrase)
        } catch let failure as GnuTLSFailure {
            if GnuTLSPrivateKey.isUnusablePassphrase(failure) {
                throw RSAError.passphraseUnusable(reason: "GnuTLS refuses it as a password string (not valid UTF-8)")
            }
            throw RSAError.internalError("GnuTLS could not encrypt the key: \(failure)")
        }
        // Never hand out fewer iterations than promised, whatever GnuTLS's default becomes.
        let reader = DERReader(encrypted)
        let top = try reader.topLevelElement(in: 0..<encrypted.count, name: "EncryptedPrivateKeyInfo")
        let encryption = try EncryptedKeyDecoder.inspectPKCS8(reader, top)
        guard encryption.keyDerivation == "PBKDF2-HMAC-SHA256", encryption.cipher == "AES-256-CBC",
            (encryption.iterationCount ?? 0) >= RSAPrivateKey.minimumPBKDF2IterationCount
        else {
            throw RSAError.internalError(
                "GnuTLS wrote \(encryption), not PBKDF2-HMAC-SHA256 with at least "
                    + "\(RSAPrivateKey.minimumPBKDF2IterationCount) iterations and AES-256-CBC"
            )
        }
        return encrypted
    }

    /// ``encryptedPKCS8DERRepresentation(passphrase:)-([UInt8])`` as PEM, "-----BEGIN ENCRYPTED PRIVATE KEY-----".
    /// - Throws: as ``encryptedPKCS8DERRepresentation(passphrase:)-([UInt8])``.
    public func encryptedPKCS8PEMRepresentation(passphrase: [UInt8]) throws -> String {
        PEMDocument.encode(
            try encryptedPKCS8DERRepresentation(passphrase: passphrase),
            label: DERKeyStructure.encryptedPrivateKeyInfo.pemLabel)
    }

    /// The fewest PBKDF2 iterations an encrypted key file RSAKit writes uses (600,000,
    /// OWASP's 2023 figure for PBKDF2-HMAC-SHA256).
    public static let minimumPBKDF2IterationCount = 600_000
}
