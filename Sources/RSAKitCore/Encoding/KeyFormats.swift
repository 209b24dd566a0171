/// The three DER structures RSAKit reads and writes RSA keys in.
///
/// | Format  | Public key                         | Private key                          |
/// |---------|------------------------------------|--------------------------------------|
/// | `pkcs1` | `RSAPublicKey`, PEM "RSA PUBLIC KEY" (RFC 8017 A.1.1; Apple's SecKeyCopyExternalRepresentation) | `RSAPrivateKey`, PEM "RSA PRIVATE KEY" (RFC 8017 A.1.2; `openssl rsa -traditional`) |
/// | `spki`  | `SubjectPublicKeyInfo`, PEM "PUBLIC KEY" (RFC 5280; Java `X509EncodedKeySpec`, OpenSSL default) | — |
/// | `pkcs8` | — | `PrivateKeyInfo`, PEM "PRIVATE KEY" (RFC 5208; Java `PKCS8EncodedKeySpec`, OpenSSL default) |
///
/// The raw values ("pkcs1", "spki", "pkcs8") are the names the CLI and the key store use.
public enum RSAKeyFormat: String, Sendable, CaseIterable {
    /// PKCS#1 (RFC 8017 Appendix A.1): `RSAPublicKey` or `RSAPrivateKey`, no algorithm identifier.
    case pkcs1 = "pkcs1"
    /// SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) with rsaEncryption; public keys only.
    case spki = "spki"
    /// PKCS#8 PrivateKeyInfo (RFC 5208 §5), unencrypted, with rsaEncryption; private keys only.
    case pkcs8 = "pkcs8"
}

// MARK: - Public keys

extension RSAPublicKey {
    /// Read a public key from DER: a PKCS#1 `RSAPublicKey` (RFC 8017 A.1.1) or a
    /// `SubjectPublicKeyInfo` with rsaEncryption (RFC 5280 §4.1, RFC 3279 §2.3.1),
    /// told apart by structure.
    ///
    /// Integers are normalised: the key's block size comes from the bit length of n.
    /// - Parameter derRepresentation: exactly one DER structure, no trailing bytes.
    /// - Throws: `RSAError.malformedDER(reason:offset:)` for bytes that are not strict DER
    ///   of a known structure; `RSAError.keyTypeMismatch` for a private key;
    ///   `RSAError.unsupportedKeyFormat` for a certificate, an encrypted key or a
    ///   non-RSA algorithm; `RSAError.invalidKey` for numbers that are not an RSA public
    ///   key (for example e = 0 or an even n); `RSAError.keySizeUnsupported` above 16384 bits.
    public init(derRepresentation: [UInt8]) throws {
        let decoded = try KeyDecoder.decode(der: derRepresentation)
        self = try decoded.requirePublicKey()
    }

    /// Read a public key from PEM text (RFC 7468): label "RSA PUBLIC KEY" (PKCS#1) or
    /// "PUBLIC KEY" (SPKI). The structure inside decides the format, whatever the label
    /// says; use ``RSAKeyFile`` to see the mislabel warning. With several blocks, the first
    /// public-key block is used. Reading is as lenient as OpenSSL (see ``RSAKeyFile``).
    /// - Throws: `RSAError.malformedPEM` for text without a usable PEM block or with bad
    ///   base64, plus every error of ``init(derRepresentation:)-([UInt8])``.
    public init(pemRepresentation: String) throws {
        let file = try RSAKeyFile(bytes: Array(pemRepresentation.utf8), requirePEM: true, preferring: .publicKey)
        switch file.key {
        case let .publicKey(key): self = key
        case .privateKey:
            throw RSAError.keyTypeMismatch(expected: "a public key", found: "a private key (\(file.structureName))")
        }
    }

    /// PKCS#1 `RSAPublicKey` DER (RFC 8017 A.1.1): SEQUENCE { n INTEGER, e INTEGER },
    /// each INTEGER minimal and positive. The form `SecKeyCopyExternalRepresentation`
    /// returns for an RSA public key on Apple platforms. It has no algorithm identifier, so
    /// a ``pssRestriction`` is not in it.
    public var pkcs1DERRepresentation: [UInt8] {
        KeyEncoder.pkcs1PublicKey(modulus: modulus, publicExponent: publicExponent).encoded()
    }

    /// PKCS#1 PEM: "-----BEGIN RSA PUBLIC KEY-----", base64 in 64-column lines, LF line ends.
    public var pkcs1PEMRepresentation: String {
        PEMDocument.encode(pkcs1DERRepresentation, label: DERKeyStructure.pkcs1PublicKey.pemLabel)
    }

    /// `SubjectPublicKeyInfo` DER (RFC 5280 §4.1, RFC 3279 §2.3.1): SEQUENCE {
    /// SEQUENCE { rsaEncryption OID, NULL }, BIT STRING (0 unused bits) { RSAPublicKey } }.
    /// Byte-identical to `openssl pkey -pubout -outform DER` and Java's `getEncoded()`.
    /// An id-RSASSA-PSS key (``pssRestriction``) writes its AlgorithmIdentifier as it was read.
    public var derRepresentation: [UInt8] {
        DERValue.sequence([
            KeyEncoder.algorithm(pssRestriction),
            .bitStringWrapping(KeyEncoder.pkcs1PublicKey(modulus: modulus, publicExponent: publicExponent))
        ]).encoded()
    }

    /// SPKI PEM: "-----BEGIN PUBLIC KEY-----", base64 in 64-column lines, LF line ends.
    public var pemRepresentation: String {
        PEMDocument.encode(derRepresentation, label: DERKeyStructure.subjectPublicKeyInfo.pemLabel)
    }

    /// DER in the given format: `.pkcs1` or `.spki`.
    /// - Throws: `RSAError.unsupportedKeyFormat` for `.pkcs8`, which holds only private keys.
    public func derRepresentation(format: RSAKeyFormat) throws -> [UInt8] {
        switch format {
        case .pkcs1: return pkcs1DERRepresentation
        case .spki: return derRepresentation
        case .pkcs8:
            throw RSAError.unsupportedKeyFormat(
                reason: "PKCS#8 holds private keys; write a public key as pkcs1 or spki")
        }
    }

    /// PEM in the given format: `.pkcs1` ("RSA PUBLIC KEY") or `.spki` ("PUBLIC KEY").
    /// - Throws: `RSAError.unsupportedKeyFormat` for `.pkcs8`.
    public func pemRepresentation(format: RSAKeyFormat) throws -> String {
        switch format {
        case .pkcs1: return pkcs1PEMRepresentation
        case .spki: return pemRepresentation
        case .pkcs8:
            throw RSAError.unsupportedKeyFormat(
                reason: "PKCS#8 holds private keys; write a public key as pkcs1 or spki")
        }
    }

    /// SHA-256 over ``derRepresentation`` (the SPKI DER): the value of
    /// `openssl pkey -pubin -outform DER | sha256sum`.
    public var fingerprint: RSAKeyFingerprint {
        RSAKeyFingerprint(digest: RSAHashAlgorithm.sha256.hash(derRepresentation))
    }
}

// MARK: - Private keys

extension RSAPrivateKey {
    /// Read a private key from DER: a PKCS#1 `RSAPrivateKey` (RFC 8017 A.1.2, version 0,
    /// two primes) or an unencrypted PKCS#8 `PrivateKeyInfo` (RFC 5208 §5; RFC 5958
    /// version 1 accepted) with rsaEncryption, told apart by structure. Every component
    /// relation is validated (see
    /// ``RSAPrivateKey/init(modulus:publicExponent:privateExponent:prime1:prime2:exponent1:exponent2:coefficient:)-([UInt8],[UInt8],[UInt8],[UInt8],[UInt8],[UInt8],[UInt8],[UInt8])``).
    /// Not constant-time: parsing branches on tags, lengths and leading zero octets (which
    /// the DER length fields reveal anyway), and validation uses variable-time GMP
    /// arithmetic once per import. Decoded secret bytes from PEM are wiped (best effort).
    /// - Throws: `RSAError.malformedDER(reason:offset:)`; `RSAError.unsupportedKeyFormat`
    ///   with "certificates are not supported yet", or a non-RSA algorithm; `RSAError.passphraseNeeded` for an
    ///   EncryptedPrivateKeyInfo (read it with ``RSAKeyFile/init(bytes:passphrase:)-([UInt8],[UInt8]?)``);
    ///   `RSAError.keyTypeMismatch` for a public key;
    ///   `RSAError.invalidKey` for inconsistent components.
    public init(derRepresentation: [UInt8]) throws {
        let decoded = try KeyDecoder.decode(der: derRepresentation)
        self = try decoded.requirePrivateKey()
    }

    /// Read a private key from PEM text: label "RSA PRIVATE KEY" (PKCS#1) or "PRIVATE KEY"
    /// (PKCS#8); the structure decides. An "ENCRYPTED PRIVATE KEY" block, or an OpenSSL
    /// "Proc-Type: 4,ENCRYPTED" block, throws `RSAError.passphraseNeeded` (use
    /// ``init(pemRepresentation:passphrase:)-(_,[UInt8]?)``). With several blocks, the first private-key
    /// block is used.
    /// - Throws: `RSAError.malformedPEM`, and every error of ``init(derRepresentation:)-([UInt8])``.
    public init(pemRepresentation: String) throws {
        var bytes = Array(pemRepresentation.utf8)
        defer { wipe(&bytes) }
        let file = try RSAKeyFile(bytes: bytes, requirePEM: true, preferring: .privateKey)
        switch file.key {
        case let .privateKey(key): self = key
        case .publicKey:
            throw RSAError.keyTypeMismatch(expected: "a private key", found: "a public key (\(file.structureName))")
        }
    }

    /// The components in PKCS#1 order (n, e, d, p, q, dP, dQ, qInv, then r_i, d_i, t_i for
    /// each otherPrimeInfo), minimal big-endian.
    private var pkcs1Components: [[UInt8]] {
        [modulus, publicExponent, privateExponent, prime1, prime2, exponent1, exponent2, coefficient]
            + otherPrimeInfos.flatMap { [$0.prime, $0.exponent, $0.coefficient] }
    }

    /// Encode with the component copies wiped afterwards (best effort; the returned
    /// array is the caller's secret to wipe).
    private func encodeWipingComponents(_ build: ([[UInt8]]) -> DERValue) -> [UInt8] {
        var components = pkcs1Components
        defer { for index in components.indices { wipe(&components[index]) } }
        return build(components).encoded()
    }

    /// PKCS#1 `RSAPrivateKey` DER (RFC 8017 A.1.2): SEQUENCE { version 0, n, e, d, p, q,
    /// dP, dQ, qInv }, INTEGERs minimal and positive; for a multi-prime key version 1 and
    /// otherPrimeInfos SEQUENCE OF { prime, exponent, coefficient }; what `openssl rsa
    /// -traditional -outform DER` writes. It cannot carry a ``pssRestriction``. Secret: the
    /// caller owns the bytes and should wipe them.
    public var pkcs1DERRepresentation: [UInt8] {
        encodeWipingComponents { KeyEncoder.pkcs1PrivateKey($0) }
    }

    /// PKCS#1 PEM: "-----BEGIN RSA PRIVATE KEY-----", 64-column lines, no encryption.
    /// Secret; a Swift `String` cannot be wiped, so prefer the DER form where you can.
    public var pkcs1PEMRepresentation: String {
        var der = pkcs1DERRepresentation
        defer { wipe(&der) }
        return PEMDocument.encode(der, label: DERKeyStructure.pkcs1PrivateKey.pemLabel)
    }

    /// PKCS#8 `PrivateKeyInfo` DER (RFC 5208 §5): SEQUENCE { version 0,
    /// SEQUENCE { rsaEncryption, NULL }, OCTET STRING { RSAPrivateKey } }, no attributes;
    /// byte-identical to `openssl pkey -outform DER`. An id-RSASSA-PSS key
    /// (``pssRestriction``) writes its AlgorithmIdentifier as it was read. Secret.
    public var pkcs8DERRepresentation: [UInt8] {
        encodeWipingComponents { components in
            .sequence([
                .unsignedInteger([0]),
                KeyEncoder.algorithm(pssRestriction),
                .octetStringWrapping(KeyEncoder.pkcs1PrivateKey(components))
            ])
        }
    }

    /// PKCS#8 PEM: "-----BEGIN PRIVATE KEY-----", 64-column lines, unencrypted. Secret.
    public var pkcs8PEMRepresentation: String {
        var der = pkcs8DERRepresentation
        defer { wipe(&der) }
        return PEMDocument.encode(der, label: DERKeyStructure.privateKeyInfo.pemLabel)
    }

    /// DER in the given format: `.pkcs1` or `.pkcs8`. Secret.
    /// - Throws: `RSAError.unsupportedKeyFormat` for `.spki`, which holds only public keys
    ///   (use `publicKey.derRepresentation`).
    public func derRepresentation(format: RSAKeyFormat) throws -> [UInt8] {
        switch format {
        case .pkcs1: return pkcs1DERRepresentation
        case .pkcs8: return pkcs8DERRepresentation
        case .spki:
            throw RSAError.unsupportedKeyFormat(
                reason: "SubjectPublicKeyInfo holds public keys; write a private key as pkcs1 or pkcs8")
        }
    }

    /// PEM in the given format: `.pkcs1` ("RSA PRIVATE KEY") or `.pkcs8` ("PRIVATE KEY"). Secret.
    /// - Throws: `RSAError.unsupportedKeyFormat` for `.spki`.
    public func pemRepresentation(format: RSAKeyFormat) throws -> String {
        switch format {
        case .pkcs1: return pkcs1PEMRepresentation
        case .pkcs8: return pkcs8PEMRepresentation
        case .spki:
            throw RSAError.unsupportedKeyFormat(
                reason: "SubjectPublicKeyInfo holds public keys; write a private key as pkcs1 or pkcs8")
        }
    }

    /// The fingerprint of the public half (``RSAPublicKey/fingerprint``).
    public var fingerprint: RSAKeyFingerprint { publicKey.fingerprint }

    /// PKCS#1 `RSAPrivateKey` DER (RFC 8017 A.1.2), the same bytes as
    /// ``pkcs1DERRepresentation``: the meaning swift-crypto's `_CryptoExtras` gives this
    /// name, so ported code writes the same bytes. (Early versions gave PKCS#8 under this name;
    /// for that, use ``pkcs8DERRepresentation``.) Secret: the caller should wipe the bytes.
    public var derRepresentation: [UInt8] { pkcs1DERRepresentation }

    /// PKCS#1 PEM ("-----BEGIN RSA PRIVATE KEY-----"), the same text as
    /// ``pkcs1PEMRepresentation`` and swift-crypto's `_CryptoExtras`. (Early versions gave
    /// PKCS#8 under this name; for that, use ``pkcs8PEMRepresentation``.) Secret.
    public var pemRepresentation: String { pkcs1PEMRepresentation }
}

extension DecodedKey {
    func requirePublicKey() throws -> RSAPublicKey {
        switch key {
        case let .publicKey(key): return key
        case .privateKey: throw RSAError.keyTypeMismatch(expected: "a public key", found: phrase)
        }
    }

    func requirePrivateKey() throws -> RSAPrivateKey {
        switch key {
        case let .privateKey(key): return key
        case .publicKey: throw RSAError.keyTypeMismatch(expected: "a private key", found: phrase)
        }
    }
}
