// The ASN.1 structures that hold RSA keys, read from and written to DER.
//
//   RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }     RFC 8017 A.1.1
//
//   RSAPrivateKey ::= SEQUENCE {                                              RFC 8017 A.1.2
//       version Version (0 two-prime, 1 multi), modulus, publicExponent, privateExponent,
//       prime1, prime2, exponent1, exponent2, coefficient  INTEGER,
//       otherPrimeInfos OtherPrimeInfos OPTIONAL }
//
//   SubjectPublicKeyInfo ::= SEQUENCE {                                       RFC 5280 4.1
//       algorithm AlgorithmIdentifier, subjectPublicKey BIT STRING }
//       -- rsaEncryption: OID 1.2.840.113549.1.1.1, parameters NULL,
//       -- subjectPublicKey = DER of RSAPublicKey                              RFC 3279 2.3.1
//
//   PrivateKeyInfo ::= SEQUENCE {                                             RFC 5208 5
//       version INTEGER (0; 1 = OneAsymmetricKey, RFC 5958), privateKeyAlgorithm
//       AlgorithmIdentifier, privateKey OCTET STRING (DER of RSAPrivateKey),
//       attributes [0] IMPLICIT Attributes OPTIONAL,
//       publicKey [1] IMPLICIT BIT STRING OPTIONAL -- version 1 only }
//
//   EncryptedPrivateKeyInfo ::= SEQUENCE {                                    RFC 5208 6
//       encryptionAlgorithm AlgorithmIdentifier, encryptedData OCTET STRING }
//
//   Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature BIT STRING }

/// Which key structure a DER encoding holds, judged from its shape alone.
package enum DERKeyStructure: Equatable {
    case pkcs1PublicKey
    case pkcs1PrivateKey
    case subjectPublicKeyInfo
    case privateKeyInfo
    case encryptedPrivateKeyInfo
    case certificate
    case certificationRequest

    /// The structure's name for messages.
    var name: String {
        switch self {
        case .pkcs1PublicKey: return "PKCS#1 RSAPublicKey"
        case .pkcs1PrivateKey: return "PKCS#1 RSAPrivateKey"
        case .subjectPublicKeyInfo: return "SubjectPublicKeyInfo"
        case .privateKeyInfo: return "PKCS#8 PrivateKeyInfo"
        case .encryptedPrivateKeyInfo: return "PKCS#8 EncryptedPrivateKeyInfo"
        case .certificate: return "X.509 certificate"
        case .certificationRequest: return "PKCS#10 certification request"
        }
    }

    /// The PEM label RFC 7468 (or OpenSSL, for PKCS#1) gives this structure.
    package var pemLabel: String {
        switch self {
        case .pkcs1PublicKey: return "RSA PUBLIC KEY"
        case .pkcs1PrivateKey: return "RSA PRIVATE KEY"
        case .subjectPublicKeyInfo: return "PUBLIC KEY"
        case .privateKeyInfo: return "PRIVATE KEY"
        case .encryptedPrivateKeyInfo: return "ENCRYPTED PRIVATE KEY"
        case .certificate: return "CERTIFICATE"
        case .certificationRequest: return "CERTIFICATE REQUEST"
        }
    }
}

/// Object identifiers (DER content octets) RSA keys meet.
internal enum KnownOID {
    /// rsaEncryption, 1.2.840.113549.1.1.1 (RFC 8017 Appendix C, RFC 3279 §2.3.1).
    static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    /// id-RSAES-OAEP, 1.2.840.113549.1.1.7.
    static let rsaesOAEP: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x07]
    /// id-RSASSA-PSS, 1.2.840.113549.1.1.10.
    static let rsassaPSS: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0A]

    /// Names of common non-RSA key algorithms, for "not an RSA key" messages.
    static let otherKeyAlgorithms: [String: String] = [
        "1.2.840.10045.2.1": "an elliptic-curve key (id-ecPublicKey)",
        "1.2.840.10040.4.1": "a DSA key (id-dsa)",
        "1.2.840.113549.1.3.1": "a Diffie-Hellman key (dhKeyAgreement)",
        "1.2.840.10046.2.1": "a Diffie-Hellman key (dhpublicnumber)",
        "1.3.101.110": "an X25519 key",
        "1.3.101.111": "an X448 key",
        "1.3.101.112": "an Ed25519 key",
        "1.3.101.113": "an Ed448 key"
    ]
}

/// The largest modulus RSAKit imports, in bits (OpenSSL's OPENSSL_RSA_MAX_MODULUS_BITS).
internal let maximumImportedModulusBitCount = 16384

/// A decoded key and the structure it came from.
internal struct DecodedKey {
    let key: RSAKeyFile.Key
    let structure: DERKeyStructure
    /// Deviations from DER that were accepted, as warning sentences.
    var notes: [String] = []

    /// The ``RSAKeyFormat`` of the outer structure.
    var format: RSAKeyFormat {
        switch structure {
        case .pkcs1PublicKey, .pkcs1PrivateKey: return .pkcs1
        case .subjectPublicKeyInfo: return .spki
        default: return .pkcs8
        }
    }

    /// "a public key (SubjectPublicKeyInfo)", for mismatch errors.
    var phrase: String {
        switch key {
        case .publicKey: return "a public key (\(structure.name))"
        case .privateKey: return "a private key (\(structure.name))"
        }
    }
}

/// Reads RSA key structures from DER (schema-driven, over ``DERReader``).
internal enum KeyDecoder {
    /// Identify and decode a DER key.
    ///
    /// - Throws: `RSAError.malformedDER` (with offset), `RSAError.malformedKey` for an
    ///   unrecognised structure, `RSAError.unsupportedKeyFormat` for encrypted, certificate
    ///   or non-RSA input, `RSAError.keySizeUnsupported` above
    ///   16384 bits, `RSAError.invalidKey` when the numbers do not form a key.
    static func decode(der: [UInt8]) throws -> DecodedKey {
        let reader = DERReader(der)
        let top = try reader.topLevelElement(in: 0..<der.count, name: "key")
        let structure = try detect(reader, top)
        var decoded: DecodedKey
        switch structure {
        case .pkcs1PublicKey:
            decoded = DecodedKey(key: .publicKey(try readPKCS1PublicKey(reader, top)), structure: structure)
        case .pkcs1PrivateKey:
            decoded = DecodedKey(key: .privateKey(try readPKCS1PrivateKey(reader, top)), structure: structure)
        case .subjectPublicKeyInfo:
            decoded = DecodedKey(key: .publicKey(try readSubjectPublicKeyInfo(reader, top)), structure: structure)
        case .privateKeyInfo:
            decoded = DecodedKey(key: .privateKey(try readPrivateKeyInfo(reader, top)), structure: structure)
        case .encryptedPrivateKeyInfo:
            // Decrypted by EncryptedKeyDecoder when the caller has a passphrase.
            throw RSAError.passphraseNeeded(what: EncryptedKeyDecoder.pkcs8Name)
        case .certificate:
            throw RSAError.unsupportedKeyFormat(reason: RSAKeyFile.certificateReason)
        case .certificationRequest:
            throw RSAError.unsupportedKeyFormat(reason: "certification requests (CSRs) are not supported")
        }
        decoded.notes = reader.notes.messages
        return decoded
    }

    /// Tell the structures apart by the tags of the outer SEQUENCE's elements.
    static func detect(_ reader: DERReader, _ top: DERElement) throws -> DERKeyStructure {
        guard top.tag == DERTag.sequence else {
            throw RSAError.malformedDER(
                reason: "expected a SEQUENCE at the start of a key, found \(top.tagName)", offset: top.offset)
        }
        let fields = try reader.children(of: top)
        let tags = fields.map(\.tag)
        switch (tags.first, tags.count) {
        case (DERTag.integer, 2) where tags[1] == DERTag.integer:
            return .pkcs1PublicKey
        case (DERTag.integer, 3...) where tags[1] == DERTag.integer:
            return .pkcs1PrivateKey
        case (DERTag.integer, 3...) where tags[1] == DERTag.sequence && tags[2] == DERTag.octetString:
            return .privateKeyInfo
        case (DERTag.sequence, 2) where tags[1] == DERTag.bitString:
            return .subjectPublicKeyInfo
        case (DERTag.sequence, 2) where tags[1] == DERTag.octetString:
            return .encryptedPrivateKeyInfo
        case (DERTag.sequence, 3) where tags[1] == DERTag.sequence && tags[2] == DERTag.bitString:
            // Certificate and CertificationRequest share the outer shape; the signed part
            // of a certificate starts with [0] version (v3) or has at least 6 fields (v1),
            // a request's has 4 (version, subject, subjectPKInfo, [0] attributes).
            let signed = try reader.children(of: fields[0])
            if signed.first?.tag == DERTag.contextSpecific(0, constructed: true) || signed.count >= 6 {
                return .certificate
            }
            return .certificationRequest
        case (DERTag.integer, 2...3)
        where tags[1] == DERTag.sequence && (tags.count == 2 || tags[2] == DERTag.sequence):
            // PKCS#12 PFX (RFC 7292 §4): version 3, authSafe ContentInfo, optional MacData.
            throw RSAError.unsupportedKeyFormat(reason: RSAKeyFile.pkcs12Reason)
        default:
            let shape = tags.map { DERTag.name($0) }.joined(separator: ", ")
            throw RSAError.malformedKey(
                reason:
                    "unrecognised structure SEQUENCE { \(shape) }; expected PKCS#1 RSAPublicKey or RSAPrivateKey, "
                    + "SubjectPublicKeyInfo or PKCS#8 PrivateKeyInfo"
            )
        }
    }

    /// RSAPublicKey (RFC 8017 A.1.1) at `top`.
    static func readPKCS1PublicKey(_ reader: DERReader, _ top: DERElement) throws -> RSAPublicKey {
        let fields = try reader.sequence(top, what: "RSAPublicKey")
        guard fields.count == 2 else {
            throw RSAError.malformedDER(
                reason: "RSAPublicKey has \(fields.count) fields; expected 2 (modulus, publicExponent)",
                offset: top.offset)
        }
        let n = BigNumber(bytes: try reader.unsignedInteger(fields[0], what: "modulus"))
        let e = BigNumber(bytes: try reader.unsignedInteger(fields[1], what: "publicExponent"))
        try checkImportSize(n)
        return try RSAPublicKey(n: n, e: e)
    }

    /// RSAPrivateKey (RFC 8017 A.1.2) at `top`: version 0 (two-prime, 9 fields) or
    /// version 1 (multi-prime, 10 fields, the last `otherPrimeInfos` SEQUENCE SIZE(1..MAX)
    /// OF SEQUENCE { prime, exponent, coefficient }).
    static func readPKCS1PrivateKey(_ reader: DERReader, _ top: DERElement) throws -> RSAPrivateKey {
        let fields = try reader.sequence(top, what: "RSAPrivateKey")
        guard let versionField = fields.first else {
            throw RSAError.malformedDER(reason: "RSAPrivateKey is empty", offset: top.offset)
        }
        let version = try reader.smallInteger(versionField, what: "RSAPrivateKey version")
        guard version == 0 || version == 1 else {
            throw RSAError.malformedDER(
                reason: "RSAPrivateKey version \(version) is neither 0 (two-prime) nor 1 (multi-prime)",
                offset: versionField.offset)
        }
        let expected = version == 0 ? 9 : 10
        guard fields.count == expected else {
            if version == 0 && fields.count > 9 {
                throw RSAError.malformedDER(
                    reason:
                        "RSAPrivateKey version 0 has \(fields.count) fields; expected 9 (otherPrimeInfos requires "
                        + "version 1)",
                    offset: fields[9].offset)
            }
            if version == 1 && fields.count == 9 {
                throw RSAError.malformedDER(
                    reason: "RSAPrivateKey version 1 (multi-prime) has no otherPrimeInfos", offset: top.end)
            }
            throw RSAError.malformedDER(
                reason: "RSAPrivateKey version \(version) has \(fields.count) fields; expected \(expected)",
                offset: fields.count > expected ? fields[expected].offset : top.end)
        }
        let names = [
            "modulus", "publicExponent", "privateExponent", "prime1", "prime2",
            "exponent1", "exponent2", "coefficient"
        ]
        var numbers: [BigNumber] = []
        for (index, name) in names.enumerated() {
            numbers.append(BigNumber(bytes: try reader.unsignedInteger(fields[index + 1], what: name)))
        }
        var otherPrimes: [OtherPrime] = []
        if version == 1 {
            let infos = try reader.sequence(fields[9], what: "otherPrimeInfos")
            guard !infos.isEmpty else {
                throw RSAError.malformedDER(reason: "otherPrimeInfos is empty (SIZE(1..MAX))", offset: fields[9].offset)
            }
            for (offset, info) in infos.enumerated() {
                let parts = try reader.sequence(info, what: "OtherPrimeInfo")
                guard parts.count == 3 else {
                    throw RSAError.malformedDER(
                        reason:
                            "OtherPrimeInfo \(offset + 1) has \(parts.count) fields; expected 3 (prime, exponent, "
                            + "coefficient)",
                        offset: info.offset)
                }
                otherPrimes.append(
                    OtherPrime(
                        prime: BigNumber(bytes: try reader.unsignedInteger(parts[0], what: "prime")),
                        exponent: BigNumber(bytes: try reader.unsignedInteger(parts[1], what: "exponent")),
                        coefficient: BigNumber(bytes: try reader.unsignedInteger(parts[2], what: "coefficient"))))
            }
        }
        try checkImportSize(numbers[0])
        return try RSAPrivateKey(
            n: numbers[0], e: numbers[1], d: numbers[2], p: numbers[3], q: numbers[4],
            dP: numbers[5], dQ: numbers[6], qInv: numbers[7], otherPrimes: otherPrimes)
    }

    /// SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) with rsaEncryption or id-RSASSA-PSS at `top`.
    static func readSubjectPublicKeyInfo(_ reader: DERReader, _ top: DERElement) throws -> RSAPublicKey {
        let fields = try reader.sequence(top, what: "SubjectPublicKeyInfo")
        guard fields.count == 2 else {
            throw RSAError.malformedDER(
                reason: "SubjectPublicKeyInfo has \(fields.count) fields; expected 2", offset: top.offset)
        }
        let restriction = try checkRSAAlgorithm(reader, fields[0])
        let keyRange = try reader.octetAlignedBitString(fields[1], what: "subjectPublicKey")
        return try readNestedPublicKey(reader, keyRange).restricted(to: restriction)
    }

    /// An RSAPublicKey encoded inside a BIT STRING (SPKI, PKCS#8 v2 publicKey).
    private static func readNestedPublicKey(_ reader: DERReader, _ range: Range<Int>) throws -> RSAPublicKey {
        let inner = try reader.topLevelElement(in: range, name: "RSAPublicKey inside the BIT STRING")
        return try readPKCS1PublicKey(reader, inner)
    }

    /// PrivateKeyInfo / OneAsymmetricKey (RFC 5208 §5, RFC 5958 §2) with rsaEncryption or
    /// id-RSASSA-PSS at `top`.
    static func readPrivateKeyInfo(_ reader: DERReader, _ top: DERElement) throws -> RSAPrivateKey {
        let fields = try reader.sequence(top, what: "PrivateKeyInfo")
        let version = try reader.smallInteger(fields[0], what: "PrivateKeyInfo version")
        guard version == 0 || version == 1 else {
            throw RSAError.malformedDER(
                reason: "PrivateKeyInfo version \(version) is neither 0 nor 1", offset: fields[0].offset)
        }
        let restriction = try checkRSAAlgorithm(reader, fields[1])
        let keyRange = try reader.octetString(fields[2], what: "privateKey")
        let inner = try reader.topLevelElement(in: keyRange, name: "RSAPrivateKey inside the privateKey OCTET STRING")
        let key = try readPKCS1PrivateKey(reader, inner).restricted(to: restriction)
        // Optional trailing fields, in order: [0] attributes, then [1] publicKey (version 1).
        var next = 3
        if next < fields.count && fields[next].tag == DERTag.contextSpecific(0, constructed: true) {
            next += 1  // Attributes are not interpreted (RFC 5208 defines none for RSA).
        }
        if next < fields.count && fields[next].tag == DERTag.contextSpecific(1, constructed: false) {
            guard version == 1 else {
                throw RSAError.malformedDER(
                    reason: "PrivateKeyInfo version 0 must not carry a [1] publicKey", offset: fields[next].offset)
            }
            // [1] IMPLICIT BIT STRING: unused-bits octet, then the RSAPublicKey DER.
            let field = fields[next]
            guard let first = field.content.first, reader.bytes[first] == 0 else {
                throw RSAError.malformedDER(
                    reason: "PrivateKeyInfo publicKey BIT STRING must hold whole octets", offset: field.offset)
            }
            let publicKey = try readNestedPublicKey(reader, (first + 1)..<field.end)
            guard publicKey == key.publicKey else {
                throw RSAError.malformedKey(reason: "the PKCS#8 publicKey field does not match the private key")
            }
            next += 1
        }
        guard next == fields.count else {
            throw RSAError.malformedDER(
                reason: "unexpected \(fields[next].tagName) in PrivateKeyInfo after the privateKey",
                offset: fields[next].offset)
        }
        return key
    }

    /// An AlgorithmIdentifier that must be rsaEncryption with NULL (or, as OpenSSL and
    /// some encoders tolerate, absent) parameters (RFC 3279 §2.3.1), or id-RSASSA-PSS
    /// (RFC 4055 §3.1).
    /// - Returns: nil for rsaEncryption; the key's restriction for id-RSASSA-PSS.
    static func checkRSAAlgorithm(_ reader: DERReader, _ element: DERElement) throws -> RSAPSSKeyRestriction? {
        let fields = try reader.sequence(element, what: "AlgorithmIdentifier")
        guard let algorithm = fields.first, fields.count <= 2 else {
            throw RSAError.malformedDER(
                reason: "AlgorithmIdentifier has \(fields.count) fields; expected 1 or 2", offset: element.offset)
        }
        let oid = try reader.objectIdentifier(algorithm, what: "algorithm")
        if oid.elementsEqual(KnownOID.rsaEncryption) {
            if fields.count == 2 {
                try reader.null(fields[1], what: "rsaEncryption parameters")
            } else {
                reader.notes.add(
                    "the rsaEncryption AlgorithmIdentifier at byte offset \(element.offset) has no NULL parameters "
                        + "(RFC 3279 requires them); read anyway"
                )
            }
            return nil
        }
        if oid.elementsEqual(KnownOID.rsassaPSS) {
            return try PSSKeyAlgorithm.decode(reader, element, fields: fields)
        }
        if oid.elementsEqual(KnownOID.rsaesOAEP) {
            throw RSAError.unsupportedKeyFormat(
                reason: "RSAES-OAEP-restricted keys (OID 1.2.840.113549.1.1.7) are not supported")
        }
        let dotted = dottedObjectIdentifier(oid)
        let what = KnownOID.otherKeyAlgorithms[dotted] ?? "algorithm OID \(dotted)"
        throw RSAError.unsupportedKeyFormat(reason: "not an RSA key: \(what)")
    }

    private static func checkImportSize(_ n: BigNumber) throws {
        guard n.bitCount <= maximumImportedModulusBitCount else {
            throw RSAError.keySizeUnsupported(
                bits: n.bitCount,
                reason: "larger than the \(maximumImportedModulusBitCount)-bit maximum accepted on import")
        }
    }
}

/// Writes RSA key structures as DER.
internal enum KeyEncoder {
    /// AlgorithmIdentifier { rsaEncryption, NULL } (RFC 3279 §2.3.1).
    /// Computed, not a stored global: LeakSanitizer reported a stored `static let` of this
    /// indirect enum as leaked (its box pointer is kept with enum tag bits set, which LSan's
    /// scan does not recognise as a pointer), and a value this small costs nothing to build.
    static var rsaEncryptionAlgorithm: DERValue { .sequence([.objectIdentifier(KnownOID.rsaEncryption), .null]) }

    /// The key's AlgorithmIdentifier: rsaEncryption, or its id-RSASSA-PSS one as read.
    static func algorithm(_ restriction: RSAPSSKeyRestriction?) -> DERValue {
        restriction.map { .encoded($0.algorithmIdentifierDER) } ?? rsaEncryptionAlgorithm
    }

    /// RSAPublicKey (RFC 8017 A.1.1).
    static func pkcs1PublicKey(modulus: [UInt8], publicExponent: [UInt8]) -> DERValue {
        .sequence([.unsignedInteger(modulus), .unsignedInteger(publicExponent)])
    }

    /// RSAPrivateKey (RFC 8017 A.1.2) from the components in order n, e, d, p, q, dP, dQ,
    /// qInv: version 0 for those eight; version 1 with otherPrimeInfos when they are
    /// followed by (r_i, d_i, t_i) triples.
    static func pkcs1PrivateKey(_ components: [[UInt8]]) -> DERValue {
        let twoPrime = components.prefix(8).map { DERValue.unsignedInteger($0) }
        guard components.count > 8 else { return .sequence([.unsignedInteger([0])] + twoPrime) }
        let others = components.dropFirst(8)
        let infos: [DERValue] = stride(from: others.startIndex, to: others.endIndex, by: 3).map { i in
            .sequence([.unsignedInteger(others[i]), .unsignedInteger(others[i + 1]), .unsignedInteger(others[i + 2])])
        }
        return .sequence([.unsignedInteger([1])] + twoPrime + [.sequence(infos)])
    }
}
