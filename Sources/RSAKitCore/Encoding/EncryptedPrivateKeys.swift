// Encrypted private-key files, read through the GnuTLS wrapper:
//
//   EncryptedPrivateKeyInfo ::= SEQUENCE {                                    RFC 5208 §6
//       encryptionAlgorithm AlgorithmIdentifier, encryptedData OCTET STRING }
//   PBES2-params ::= SEQUENCE { keyDerivationFunc, encryptionScheme }          RFC 8018 A.4
//   PBKDF2-params ::= SEQUENCE { salt OCTET STRING, iterationCount INTEGER,
//       keyLength INTEGER OPTIONAL, prf AlgorithmIdentifier DEFAULT hmacWithSHA1 } RFC 8018 A.2
//   PBEParameter ::= SEQUENCE { salt OCTET STRING, iterationCount INTEGER }   RFC 8018 A.3
//   pkcs-12PbeParams ::= SEQUENCE { salt OCTET STRING, iterations INTEGER }   RFC 7292 App. C
//
// and OpenSSL's legacy PEM encryption ("Proc-Type: 4,ENCRYPTED", "DEK-Info: CIPHER,IV").
// RSAKit reads only the public parameters itself (to name the scheme, and to refuse the
// ones GnuTLS lacks, such as scrypt, by name); GnuTLS decrypts; RSAKit parses the plain key.
// The exception is PBES2 with RC2-CBC (RFC 8018 §B.2.3), which GnuTLS lacks: RSAKit
// decrypts it (read only) with Nettle's PBKDF2 and RC2 (Hashing/PBES2RC2.swift).
//
// This layer does not link GnuTLS: the decryption comes in as an RSAKeyFileDecryptor, which
// RSAKitPKI supplies (KeyFiles/EncryptedKeyFiles.swift) along with every public call that
// takes a passphrase. Without one, an encrypted file asks for a passphrase, as it did.

/// How an encrypted key file is protected, read from its unencrypted parameters.
public struct RSAKeyFileEncryption: Sendable, Hashable, CustomStringConvertible {
    /// The scheme: "PBES2", "PBES1" (RFC 8018 §6.1), "PKCS#12 PBE" (RFC 7292 Appendix C)
    /// or "OpenSSL legacy PEM".
    public let scheme: String
    /// The key derivation: "PBKDF2-HMAC-SHA256", "scrypt", "MD5" (PBES1), "EVP_BytesToKey-MD5"...
    public let keyDerivation: String
    /// The iteration count (PBKDF2, PBES1, PKCS#12), nil where the scheme has none.
    public let iterationCount: Int?
    /// The cipher: "AES-256-CBC", "DES-EDE3-CBC", "RC2-40-CBC", "RC2-CBC (128-bit effective key)"...
    public let cipher: String

    /// "PBES2: PBKDF2-HMAC-SHA256, 600000 iterations, AES-256-CBC".
    public var description: String {
        var text = "\(scheme): \(keyDerivation)"
        if let iterationCount { text += ", \(iterationCount) iterations" }
        return text + ", \(cipher)"
    }
}

/// Decrypts an encrypted key file's body with a passphrase, for the schemes this layer does
/// not decrypt itself (RSAKitPKI's GnuTLS one is the only one). Each returns the plain key
/// DER, which the caller parses and wipes, or throws the `RSAError` for the failure
/// (`passphraseIncorrect(what:)`, `passphraseUnusable`, `unsupportedKeyFormat` naming
/// `encryption`), `what` being the file kind for messages.
package protocol RSAKeyFileDecryptor: Sendable {
    /// PKCS#8 `EncryptedPrivateKeyInfo` DER -> `PrivateKeyInfo` DER.
    func decryptPKCS8(der: [UInt8], passphrase: [UInt8], what: String, encryption: RSAKeyFileEncryption) throws
        -> [UInt8]
    /// An OpenSSL legacy encrypted PEM block, re-encoded as PEM text -> the plain key DER
    /// (PKCS#8 `PrivateKeyInfo`).
    func decryptOpenSSLPEM(_ pem: [UInt8], passphrase: [UInt8], what: String, encryption: RSAKeyFileEncryption) throws
        -> [UInt8]
}

/// Reads encrypted key structures (see the top of this file).
package enum EncryptedKeyDecoder {
    /// What error messages call an encrypted PKCS#8 file.
    package static let pkcs8Name = "PKCS#8 EncryptedPrivateKeyInfo"
    /// What error messages call a legacy encrypted PEM file.
    package static let legacyPEMName = "OpenSSL encrypted PEM key"

    /// Decode a DER key of any structure; an `EncryptedPrivateKeyInfo` is decrypted with
    /// `passphrase`.
    /// - Throws: every error of `KeyDecoder.decode(der:)`, and for encrypted input
    ///   `RSAError.passphraseNeeded` (no passphrase), `RSAError.passphraseIncorrect`,
    ///   `RSAError.passphraseUnusable`, `RSAError.unsupportedKeyFormat` (scrypt or a cipher
    ///   GnuTLS lacks, by name; an rc2ParameterVersion RFC 8018 does not define).
    ///   PBES2 with RC2-CBC is decrypted by RSAKit itself (`decryptRC2(_:passphrase:)`).
    ///   Other encrypted schemes go to `decryptor`; without one, a passphrase is not enough
    ///   (`RSAError.passphraseNeeded`).
    static func decode(
        der: [UInt8], passphrase: [UInt8]?,
        decryptor: (any RSAKeyFileDecryptor)?
    ) throws -> (DecodedKey, RSAKeyFileEncryption?) {
        let reader = DERReader(der)
        let top = try reader.topLevelElement(in: 0..<der.count, name: "key")
        guard try KeyDecoder.detect(reader, top) == .encryptedPrivateKeyInfo else {
            return (try KeyDecoder.decode(der: der), nil)
        }
        let encryption = try inspectPKCS8(reader, top)
        guard let passphrase else { throw RSAError.passphraseNeeded(what: pkcs8Name) }
        if let rc2 = try rc2Parameters(reader, top) {
            // GnuTLS has no RC2: RSAKit decrypts PBES2 with RC2-CBC itself, over Nettle.
            return (try decryptRC2(rc2, passphrase: passphrase), encryption)
        }
        guard let decryptor else { throw RSAError.passphraseNeeded(what: pkcs8Name) }
        var plain = try decryptor.decryptPKCS8(
            der: der, passphrase: passphrase, what: pkcs8Name, encryption: encryption)
        defer { wipe(&plain) }
        var decoded = try plainKey(der: plain)
        decoded = DecodedKey(key: decoded.key, structure: .encryptedPrivateKeyInfo, notes: decoded.notes)
        return (decoded, encryption)
    }

    /// Decrypt an OpenSSL legacy encrypted PEM block ("Proc-Type: 4,ENCRYPTED").
    /// - Parameters:
    ///   - label: the block's label ("RSA PRIVATE KEY").
    ///   - headers: its RFC 1421 headers, with "DEK-Info: CIPHER,IV-HEX".
    ///   - der: the still-encrypted base64-decoded body.
    /// - Throws: as ``decode(der:passphrase:)``; `RSAError.malformedPEM` without DEK-Info.
    static func decodeLegacyPEM(
        label: String, headers: [(name: String, value: String)], der: [UInt8],
        line: Int, passphrase: [UInt8]?,
        decryptor: (any RSAKeyFileDecryptor)?
    ) throws -> (DecodedKey, RSAKeyFileEncryption) {
        guard let dekInfo = headers.first(where: { $0.name == "DEK-Info" })?.value,
            let cipher = dekInfo.split(separator: ",").first.map(String.init), !cipher.isEmpty
        else {
            throw RSAError.malformedPEM(reason: "encrypted PEM block \"\(label)\" has no DEK-Info header", line: line)
        }
        let encryption = RSAKeyFileEncryption(
            scheme: "OpenSSL legacy PEM", keyDerivation: "EVP_BytesToKey-MD5",
            iterationCount: nil, cipher: cipher.uppercased())
        guard label == "RSA PRIVATE KEY" else {
            throw RSAError.unsupportedKeyFormat(reason: "not an RSA key: encrypted PEM block \"\(label)\"")
        }
        guard let passphrase, let decryptor else { throw RSAError.passphraseNeeded(what: legacyPEMName) }
        var pem = Array(PEMDocument.encode(der, label: label, headers: headers).utf8)
        defer { wipe(&pem) }
        var plain = try decryptor.decryptOpenSSLPEM(
            pem, passphrase: passphrase, what: legacyPEMName, encryption: encryption)
        defer { wipe(&plain) }
        let decoded = try plainKey(der: plain)
        return (DecodedKey(key: decoded.key, structure: .pkcs1PrivateKey, notes: decoded.notes), encryption)
    }

    /// The plain key a decryptor returned, parsed by RSAKit's own PKCS#8 reader.
    private static func plainKey(der plain: [UInt8]) throws -> DecodedKey {
        var decoded = try KeyDecoder.decode(der: plain)
        // GnuTLS re-encodes an id-RSASSA-PSS identifier (its hash AlgorithmIdentifiers without
        // NULL); the bytes inside the encryption are out of reach, so write the parameters
        // back as OpenSSL does (with NULL), the encoding of `openssl genpkey -algorithm RSA-PSS`.
        if case let .privateKey(privateKey) = decoded.key, let restriction = privateKey.pssRestriction {
            decoded = DecodedKey(
                key: .privateKey(privateKey.restricted(to: RSAPSSKeyRestriction(parameters: restriction.parameters))),
                structure: decoded.structure, notes: decoded.notes)
        }
        return decoded
    }

    // MARK: Public parameters

    /// Name the scheme of an `EncryptedPrivateKeyInfo`, refusing by name what GnuTLS cannot
    /// decrypt (scrypt; ciphers outside GnuTLS's list).
    package static func inspectPKCS8(_ reader: DERReader, _ top: DERElement) throws -> RSAKeyFileEncryption {
        let fields = try reader.sequence(top, what: "EncryptedPrivateKeyInfo")
        let algorithm = try reader.sequence(fields[0], what: "encryptionAlgorithm")
        guard let first = algorithm.first else {
            throw RSAError.malformedDER(reason: "empty encryptionAlgorithm", offset: fields[0].offset)
        }
        let oid = dottedObjectIdentifier(try reader.objectIdentifier(first, what: "encryption algorithm"))
        let parameters = algorithm.count > 1 ? algorithm[1] : nil
        if oid == "1.2.840.113549.1.5.13" {
            guard let parameters else {
                throw RSAError.malformedDER(reason: "PBES2 without parameters", offset: first.offset)
            }
            return try inspectPBES2(reader, parameters)
        }
        let iterations = try parameters.flatMap { element -> Int? in
            let values = try reader.sequence(element, what: "PBE parameters")
            return values.count >= 2 ? try reader.smallInteger(values[1], what: "iteration count") : nil
        }
        if let (kdf, cipher) = pbes1Schemes[oid] {
            return RSAKeyFileEncryption(scheme: "PBES1", keyDerivation: kdf, iterationCount: iterations, cipher: cipher)
        }
        if let cipher = pkcs12Schemes[oid] {
            return RSAKeyFileEncryption(
                scheme: "PKCS#12 PBE", keyDerivation: "PKCS#12 KDF (SHA-1)", iterationCount: iterations, cipher: cipher)
        }
        throw RSAError.unsupportedKeyFormat(
            reason: "\(pkcs8Name) with the unknown encryption algorithm \(oid) is not supported")
    }

    private static func inspectPBES2(_ reader: DERReader, _ element: DERElement) throws -> RSAKeyFileEncryption {
        let parts = try reader.sequence(element, what: "PBES2-params")
        guard parts.count == 2 else {
            throw RSAError.malformedDER(
                reason: "PBES2-params must hold keyDerivationFunc and encryptionScheme", offset: element.offset)
        }
        let kdf = try reader.sequence(parts[0], what: "keyDerivationFunc")
        let scheme = try reader.sequence(parts[1], what: "encryptionScheme")
        guard let kdfOIDElement = kdf.first, let cipherOIDElement = scheme.first else {
            throw RSAError.malformedDER(reason: "empty AlgorithmIdentifier in PBES2-params", offset: element.offset)
        }
        let kdfOID = dottedObjectIdentifier(try reader.objectIdentifier(kdfOIDElement, what: "key derivation function"))
        let cipherOID = dottedObjectIdentifier(try reader.objectIdentifier(cipherOIDElement, what: "encryption scheme"))
        let cipher = pbes2Ciphers[cipherOID]
        if kdfOID == "1.3.6.1.4.1.11591.4.11" {
            throw RSAError.unsupportedKeyFormat(
                reason:
                    "scrypt-based PKCS#8 encryption (openssl pkcs8 -scrypt) is not supported, since GnuTLS cannot "
                    + "derive scrypt keys; re-encrypt the key with `openssl pkcs8 -topk8 -v2 aes-256-cbc -v2prf "
                    + "hmacWithSHA256`"
            )
        }
        guard kdfOID == "1.2.840.113549.1.5.12", kdf.count == 2 else {
            throw RSAError.unsupportedKeyFormat(
                reason: "PBES2 with the key derivation function \(kdfOID) is not supported (only PBKDF2)")
        }
        let pbkdf2 = try reader.sequence(kdf[1], what: "PBKDF2-params")
        guard pbkdf2.count >= 2 else {
            throw RSAError.malformedDER(reason: "PBKDF2-params without an iteration count", offset: kdf[1].offset)
        }
        let iterations = try reader.smallInteger(pbkdf2[1], what: "PBKDF2 iteration count")
        var prf = "HMAC-SHA1"
        if let last = pbkdf2.last, last.tag == DERTag.sequence, let prfOID = try reader.children(of: last).first {
            let dotted = dottedObjectIdentifier(try reader.objectIdentifier(prfOID, what: "PBKDF2 prf"))
            prf = pbkdf2PRFs[dotted] ?? dotted
        }
        if cipherOID == rc2CBCOID {
            let bits = try rc2EffectiveKeyBits(reader, scheme)
            return RSAKeyFileEncryption(
                scheme: "PBES2", keyDerivation: "PBKDF2-" + prf, iterationCount: iterations,
                cipher: "RC2-CBC (\(bits)-bit effective key)")
        }
        guard let cipher else {
            let name = unsupportedCiphers[cipherOID] ?? cipherOID
            throw RSAError.unsupportedKeyFormat(
                reason:
                    "PBES2 with the cipher \(name) is not supported by GnuTLS; re-encrypt the key with `openssl "
                    + "pkcs8 -topk8 -v2 aes-256-cbc`"
            )
        }
        return RSAKeyFileEncryption(
            scheme: "PBES2", keyDerivation: "PBKDF2-" + prf, iterationCount: iterations, cipher: cipher)
    }

    // MARK: PBES2 with RC2-CBC, decrypted by RSAKit over Nettle (read only)

    /// rc2CBC (RFC 8018 §B.2.3).
    static let rc2CBCOID = "1.2.840.113549.3.2"

    /// What decrypting PBES2 with PBKDF2 and RC2-CBC needs, all public parameters.
    struct RC2Parameters {
        let prf: NettlePBES2.PRF
        let salt: [UInt8]
        let iterations: Int
        let keyByteCount: Int
        let effectiveKeyBits: Int
        let iv: [UInt8]
        let ciphertext: [UInt8]
    }

    /// The effective key bits of an RC2-CBC encryptionScheme (RFC 8018 §B.2.3):
    ///
    ///     RC2-CBC-Parameter ::= SEQUENCE { rc2ParameterVersion INTEGER OPTIONAL,
    ///                                      iv OCTET STRING (SIZE(8)) }
    ///
    /// version 160 -> 40 bits, 120 -> 64, 58 -> 128, b >= 256 -> b; absent -> 32 bits.
    /// - Throws: `RSAError.unsupportedKeyFormat` for another version or more than 1024 bits.
    private static func rc2EffectiveKeyBits(_ reader: DERReader, _ scheme: [DERElement]) throws -> Int {
        guard scheme.count == 2 else {
            throw RSAError.malformedDER(reason: "RC2-CBC without parameters", offset: scheme[0].offset)
        }
        let parameters = try reader.sequence(scheme[1], what: "RC2-CBC-Parameter")
        guard parameters.count == 1 || parameters.count == 2 else {
            throw RSAError.malformedDER(
                reason: "RC2-CBC-Parameter must hold an optional version and an IV", offset: scheme[1].offset)
        }
        guard parameters.count == 2 else { return 32 }
        let version = try reader.smallInteger(parameters[0], what: "rc2ParameterVersion")
        switch version {
        case 160: return 40
        case 120: return 64
        case 58: return 128
        case 256...1024: return version
        default:
            throw RSAError.unsupportedKeyFormat(
                reason:
                    "PBES2 with RC2-CBC whose rc2ParameterVersion is \(version) is not supported (RFC 8018 §B.2.3 "
                    + "defines 160, 120, 58 and 256 to 1024)"
            )
        }
    }

    /// The RC2 parameters when `top` is PBES2 with PBKDF2 and RC2-CBC, else nil. Call after
    /// ``inspectPKCS8(_:_:)``, which has checked the structure up to the cipher.
    private static func rc2Parameters(_ reader: DERReader, _ top: DERElement) throws -> RC2Parameters? {
        let fields = try reader.sequence(top, what: "EncryptedPrivateKeyInfo")
        let algorithm = try reader.sequence(fields[0], what: "encryptionAlgorithm")
        guard algorithm.count == 2,
            dottedObjectIdentifier(try reader.objectIdentifier(algorithm[0], what: "encryption algorithm"))
                == "1.2.840.113549.1.5.13"
        else { return nil }
        let parts = try reader.sequence(algorithm[1], what: "PBES2-params")
        let kdf = try reader.sequence(parts[0], what: "keyDerivationFunc")
        let scheme = try reader.sequence(parts[1], what: "encryptionScheme")
        guard dottedObjectIdentifier(try reader.objectIdentifier(scheme[0], what: "encryption scheme")) == rc2CBCOID
        else { return nil }
        let bits = try rc2EffectiveKeyBits(reader, scheme)
        let rc2 = try reader.sequence(scheme[1], what: "RC2-CBC-Parameter")
        let iv = Array(reader.bytes[try reader.octetString(rc2[rc2.count - 1], what: "RC2-CBC IV")])
        guard iv.count == 8 else {
            throw RSAError.malformedDER(
                reason: "RC2-CBC IV of \(iv.count) bytes; it must be 8", offset: rc2[rc2.count - 1].offset)
        }
        // PBKDF2-params ::= SEQUENCE { salt OCTET STRING, iterationCount INTEGER,
        //     keyLength INTEGER OPTIONAL, prf AlgorithmIdentifier DEFAULT hmacWithSHA1 }
        let pbkdf2 = try reader.sequence(kdf[1], what: "PBKDF2-params")
        let salt = Array(reader.bytes[try reader.octetString(pbkdf2[0], what: "PBKDF2 salt")])
        let iterations = try reader.smallInteger(pbkdf2[1], what: "PBKDF2 iteration count")
        // NOTE: RC2 keys have no fixed length; without keyLength use 16 bytes, as OpenSSL writes.
        var keyByteCount = 16
        var prf = NettlePBES2.PRF.hmacSHA1
        for element in pbkdf2.dropFirst(2) {
            if element.tag == DERTag.integer {
                keyByteCount = try reader.smallInteger(element, what: "PBKDF2 keyLength")
            } else if let oidElement = try reader.sequence(element, what: "PBKDF2 prf").first {
                let oid = dottedObjectIdentifier(try reader.objectIdentifier(oidElement, what: "PBKDF2 prf"))
                switch oid {
                case "1.2.840.113549.2.7": prf = .hmacSHA1
                case "1.2.840.113549.2.9": prf = .hmacSHA256
                case "1.2.840.113549.2.10": prf = .hmacSHA384
                case "1.2.840.113549.2.11": prf = .hmacSHA512
                default:
                    throw RSAError.unsupportedKeyFormat(
                        reason: "PBES2 with RC2-CBC and the PBKDF2 prf \(pbkdf2PRFs[oid] ?? oid) is not supported")
                }
            }
        }
        guard (1...128).contains(keyByteCount), iterations >= 1 else {
            throw RSAError.malformedDER(
                reason: "PBKDF2-params for RC2-CBC with \(iterations) iterations and a \(keyByteCount)-byte key",
                offset: kdf[1].offset)
        }
        let ciphertext = Array(reader.bytes[try reader.octetString(fields[1], what: "encryptedData")])
        return RC2Parameters(
            prf: prf, salt: salt, iterations: iterations, keyByteCount: keyByteCount,
            effectiveKeyBits: bits, iv: iv, ciphertext: ciphertext)
    }

    /// PBES2 decryption (RFC 8018 §6.2.2) with RC2-CBC: DK = PBKDF2(P, S, c, dkLen), then
    /// RC2-CBC and the padding check, then RSAKit's PKCS#8 reader. A failed padding check or
    /// plain bytes that are not a PrivateKeyInfo both mean the wrong passphrase.
    private static func decryptRC2(_ parameters: RC2Parameters, passphrase: [UInt8]) throws -> DecodedKey {
        let key = NettlePBES2.pbkdf2(
            parameters.prf, password: passphrase, salt: parameters.salt,
            iterations: parameters.iterations, keyByteCount: parameters.keyByteCount)
        guard
            var plain = NettlePBES2.rc2CBCDecrypt(
                key: key, effectiveKeyBits: parameters.effectiveKeyBits,
                iv: parameters.iv, ciphertext: parameters.ciphertext)
        else {
            throw RSAError.passphraseIncorrect(what: pkcs8Name)
        }
        defer { wipe(&plain) }
        let decoded: DecodedKey
        do {
            decoded = try KeyDecoder.decode(der: plain)
        } catch {
            throw RSAError.passphraseIncorrect(what: pkcs8Name)
        }
        guard decoded.structure == .privateKeyInfo else { throw RSAError.passphraseIncorrect(what: pkcs8Name) }
        return DecodedKey(key: decoded.key, structure: .encryptedPrivateKeyInfo, notes: decoded.notes)
    }

    /// PBES2 encryption schemes GnuTLS decrypts (RFC 8018 B.2, NIST AES OIDs).
    static let pbes2Ciphers: [String: String] = [
        "2.16.840.1.101.3.4.1.2": "AES-128-CBC", "2.16.840.1.101.3.4.1.22": "AES-192-CBC",
        "2.16.840.1.101.3.4.1.42": "AES-256-CBC", "1.2.840.113549.3.7": "DES-EDE3-CBC",
        "1.3.14.3.2.7": "DES-CBC"
    ]
    /// Ciphers PBES2 may name that GnuTLS 3.7 does not decrypt, for messages.
    static let unsupportedCiphers: [String: String] = [
        "1.2.392.200011.61.1.1.1.2": "CAMELLIA-128-CBC", "1.2.392.200011.61.1.1.1.3": "CAMELLIA-192-CBC",
        "1.2.392.200011.61.1.1.1.4": "CAMELLIA-256-CBC",
        "1.2.410.200004.1.4": "SEED-CBC", "1.2.156.10197.1.104.2": "SM4-CBC",
        "1.2.840.113549.3.9": "RC5-CBC", "1.3.6.1.4.1.188.7.1.1.2": "IDEA-CBC"
    ]
    /// PBKDF2 pseudo-random functions (RFC 8018 B.1.1, RFC 8018 B.1.2).
    static let pbkdf2PRFs: [String: String] = [
        "1.2.840.113549.2.7": "HMAC-SHA1", "1.2.840.113549.2.8": "HMAC-SHA224", "1.2.840.113549.2.9": "HMAC-SHA256",
        "1.2.840.113549.2.10": "HMAC-SHA384", "1.2.840.113549.2.11": "HMAC-SHA512"
    ]
    /// PBES1 (RFC 8018 §6.1, A.3): digest and cipher.
    static let pbes1Schemes: [String: (String, String)] = [
        "1.2.840.113549.1.5.1": ("MD2", "DES-CBC"), "1.2.840.113549.1.5.3": ("MD5", "DES-CBC"),
        "1.2.840.113549.1.5.4": ("MD2", "RC2-64-CBC"), "1.2.840.113549.1.5.6": ("MD5", "RC2-64-CBC"),
        "1.2.840.113549.1.5.10": ("SHA-1", "DES-CBC"), "1.2.840.113549.1.5.11": ("SHA-1", "RC2-64-CBC")
    ]
    /// PKCS#12 password-based encryption (RFC 7292 Appendix C).
    static let pkcs12Schemes: [String: String] = [
        "1.2.840.113549.1.12.1.1": "RC4-128", "1.2.840.113549.1.12.1.2": "RC4-40",
        "1.2.840.113549.1.12.1.3": "DES-EDE3-CBC", "1.2.840.113549.1.12.1.4": "DES-EDE-CBC (2-key)",
        "1.2.840.113549.1.12.1.5": "RC2-128-CBC", "1.2.840.113549.1.12.1.6": "RC2-40-CBC"
    ]
}
