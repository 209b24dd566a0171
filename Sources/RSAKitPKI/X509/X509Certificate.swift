// X.509 certificates (RFC 5280), parsed by GnuTLS, as a Swift value: the analogue of
// Apple's SecCertificate (SecCertificateCreateWithData, SecCertificateCopySubjectSummary,
// SecCertificateCopyData, SecCertificateCopyKey).
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An X.509 v1-v3 certificate (RFC 5280 §4.1), read once by GnuTLS into plain fields.
///
/// Two certificates are equal when their DER encodings are equal. Making one verifies
/// nothing about trust; see ``RSATrust`` for that.
public struct X509Certificate: Sendable, Hashable, CustomStringConvertible {
    /// The DER encoding, exactly the bytes the certificate was read from
    /// (SecCertificateCopyData).
    public let derRepresentation: [UInt8]
    /// The subject distinguished name as an RFC 4514 string, most specific RDN first
    /// ("CN=www.example.com,O=Example,C=US"), as `openssl x509 -nameopt RFC2253` prints it.
    public let subject: String
    /// The issuer distinguished name as an RFC 4514 string.
    public let issuer: String
    /// A short human name for the certificate, as SecCertificateCopySubjectSummary gives it:
    /// the subject's common name unescaped (the last CN when there are several), else the
    /// first e-mail address (subject emailAddress, then an rfc822Name subjectAltName), else
    /// the organization (O), else the organizational unit (OU), else the RFC 4514 subject.
    public let subjectSummary: String
    /// The subject's commonName values, unescaped, in DER order.
    public let commonNames: [String]
    /// The serial number's magnitude, big-endian, without leading zero octets (at least one
    /// octet): the digits `openssl x509 -serial` prints.
    public let serialNumber: [UInt8]
    /// notBefore (RFC 5280 §4.1.2.5), whole seconds.
    public let notValidBefore: Date
    /// notAfter, whole seconds; the certificate is valid through this instant.
    public let notValidAfter: Date
    /// The X.509 version: 1, 2 or 3.
    public let version: Int
    /// The subject public key when it is an RSA key (rsaEncryption, or id-RSASSA-PSS with its
    /// ``RSAPublicKey/pssRestriction``), else nil (SecCertificateCopyKey for the key types
    /// RSAKit handles).
    public let publicKey: RSAPublicKey?
    /// GnuTLS's name for the subject public key algorithm ("RSA", "RSA-PSS", "EC/ECDSA"...).
    public let publicKeyAlgorithmName: String
    /// The subject public key's size in bits (for RSA: the modulus bit count).
    public let publicKeyBitCount: Int
    /// The signature algorithm: GnuTLS's name ("RSA-SHA256"), else the dotted OID.
    public let signatureAlgorithmName: String
    /// SHA-256 of ``derRepresentation``: 32 bytes, the certificate fingerprint
    /// (`openssl x509 -fingerprint -sha256`).
    public let fingerprint: [UInt8]
    /// SHA-256 of the SubjectPublicKeyInfo DER exactly as the certificate encodes it: for RSA
    /// keys (RSA-PSS ones too) the value of ``RSAPublicKey/fingerprint``, which links a
    /// certificate to its private key.
    public let publicKeyFingerprint: RSAKeyFingerprint?
    /// The keyUsage extension, nil when absent (any usage allowed).
    public let keyUsage: KeyUsage?
    /// The extendedKeyUsage purposes in order, nil when the extension is absent.
    public let extendedKeyUsage: [ExtendedKeyUsage]?
    /// The subjectAltName entries in order (empty when the extension is absent).
    public let subjectAlternativeNames: [SubjectAlternativeName]
    /// The basicConstraints extension, nil when absent.
    public let basicConstraints: BasicConstraints?
    /// The OIDs of every extension marked critical, in order.
    public let criticalExtensionOIDs: [String]

    /// The largest input ``certificates(from:)-([UInt8])`` accepts, in bytes (16 MiB; the Debian CA
    /// bundle is about 200 KB).
    public static let maximumByteCount = 16 << 20

    /// Read one certificate from its DER encoding (SecCertificateCreateWithData).
    ///
    /// - Parameter derRepresentation: exactly one DER `Certificate`, no trailing bytes.
    /// - Throws: `RSAError.malformedCertificate(reason:)` when GnuTLS cannot parse it.
    public init(derRepresentation: [UInt8]) throws {
        guard derRepresentation.first == DERTag.sequence else {
            throw RSAError.malformedCertificate(reason: "the DER does not start with a SEQUENCE")
        }
        let reader = DERReader(derRepresentation)
        guard let top = try? reader.element(at: 0, limit: derRepresentation.count) else {
            throw RSAError.malformedCertificate(reason: "the DER's outer length is damaged or truncated")
        }
        guard top.end == derRepresentation.count else {
            throw RSAError.malformedCertificate(
                reason: "\(derRepresentation.count - top.end) trailing bytes after the certificate")
        }
        let parsed: GnuTLSCertificate
        do {
            parsed = try GnuTLSCertificate(der: derRepresentation)
        } catch let failure as GnuTLSFailure {
            throw RSAError.malformedCertificate(reason: failure.message.lowercased())
        }
        do {
            try self.init(parsed: parsed, der: derRepresentation)
        } catch let failure as GnuTLSFailure {
            throw RSAError.malformedCertificate(reason: failure.description)
        }
    }

    /// Read one certificate from PEM text ("-----BEGIN CERTIFICATE-----"); with several
    /// blocks, the first certificate block is used.
    /// - Throws: `RSAError.malformedPEM`, `RSAError.malformedCertificate`.
    public init(pemRepresentation: String) throws {
        let all = try X509Certificate.certificates(fromPEM: Array(pemRepresentation.utf8), firstOnly: true)
        self = all[0]
    }

    /// Every certificate in `bytes`: one DER certificate, several concatenated, one PEM
    /// block or a PEM bundle (text between blocks is ignored, as in CA bundles and
    /// `openssl pkcs12` output with "Bag Attributes").
    ///
    /// - Returns: the certificates in file order; never empty.
    /// - Throws: `RSAError.malformedCertificate` (no certificate found, with what was
    ///   found instead; or a certificate GnuTLS rejects, naming its block),
    ///   `RSAError.malformedPEM` for a broken certificate block.
    public static func certificates(from bytes: [UInt8]) throws -> [X509Certificate] {
        guard bytes.count <= maximumByteCount else {
            throw RSAError.malformedCertificate(
                reason: "input of \(bytes.count) bytes is larger than the \(maximumByteCount)-byte limit")
        }
        guard !bytes.isEmpty else { throw RSAError.malformedCertificate(reason: "the input is empty") }
        let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        if PEMDocument.containsBeginLine(text) {
            return try certificates(fromPEM: text, firstOnly: false)
        }
        guard bytes.first == DERTag.sequence else {
            throw RSAError.malformedCertificate(
                reason: "input is neither PEM (no \"-----BEGIN\" line) nor DER (does not start with a SEQUENCE)")
        }
        var result: [X509Certificate] = []
        let reader = DERReader(bytes)
        var offset = 0
        while offset < bytes.count {
            guard let element = try? reader.element(at: offset, limit: bytes.count), element.tag == DERTag.sequence
            else {
                throw RSAError.malformedCertificate(
                    reason: "DER certificate \(result.count + 1) at byte offset \(offset) is damaged or truncated")
            }
            result.append(try X509Certificate(derRepresentation: Array(bytes[offset..<element.end])))
            offset = element.end
        }
        return result
    }

    private static func certificates(fromPEM text: [UInt8], firstOnly: Bool) throws -> [X509Certificate] {
        let document = PEMDocument(scanning: text)
        let blocks = document.blocks.filter(\.isCertificateLabel)
        guard !blocks.isEmpty else {
            let labels = document.blocks.map { "\"\($0.label)\"" }.joined(separator: ", ")
            if document.blocks.isEmpty {
                throw RSAError.malformedPEM(
                    reason: "a \"-----BEGIN\" marker was found, but no complete PEM block", line: 1)
            }
            throw RSAError.malformedCertificate(reason: "no CERTIFICATE block found (blocks: \(labels))")
        }
        var result: [X509Certificate] = []
        for block in firstOnly ? [blocks[0]] : blocks {
            let (_, der) = try document.decode(block)
            // "TRUSTED CERTIFICATE" (OpenSSL) appends trust settings after the certificate.
            var certificateDER = der
            if block.label == "TRUSTED CERTIFICATE",
                let top = try? DERReader(der).element(at: 0, limit: der.count)
            {
                certificateDER = Array(der[..<top.end])
            }
            do {
                result.append(try X509Certificate(derRepresentation: certificateDER))
            } catch let RSAError.malformedCertificate(reason) {
                throw RSAError.malformedCertificate(
                    reason: "\(reason) (PEM block \(block.index), \"\(block.label)\" at line \(block.beginLine))")
            }
        }
        return result
    }

    /// Read every field once from the GnuTLS object.
    internal init(parsed: GnuTLSCertificate, der: [UInt8]) throws {
        // GnuTLS reads malformed times leniently (a 15-character UTCTime as some other date).
        try CertificateDERChecks.checkValidityTimes(der)
        derRepresentation = der
        subject = try parsed.subjectDN()
        issuer = try parsed.issuerDN()
        commonNames = try X509Certificate.attributeStrings(parsed, X509Certificate.commonNameOID)
        let rawSerial = try parsed.serial()
        let magnitude = Array(rawSerial.drop(while: { $0 == 0 }))
        serialNumber = magnitude.isEmpty ? [0] : magnitude
        notValidBefore = Date(timeIntervalSince1970: TimeInterval(parsed.activationTime))
        notValidAfter = Date(timeIntervalSince1970: TimeInterval(parsed.expirationTime))
        // GnuTLS returns the encoded INTEGER plus one for any value (certtool prints
        // "Version: 13"); RFC 5280 §4.1.2.1 defines v1, v2 and v3 only, and OpenSSL refuses
        // others. Found by Fuzz/FuzzX509 (Tests/RSAKitTests/Fixtures/fuzz/FuzzX509/version-13).
        guard (1...3).contains(parsed.version) else {
            throw RSAError.malformedCertificate(
                reason: "its X.509 version field says v\(parsed.version), not v1, v2 or v3 (RFC 5280 §4.1.2.1)")
        }
        version = parsed.version
        let algorithm = parsed.publicKeyAlgorithm()
        publicKeyAlgorithmName = algorithm.name
        publicKeyBitCount = algorithm.bitCount
        let spki = CertificateDERChecks.subjectPublicKeyInfo(der) ?? (try? parsed.subjectPublicKeyInfoDER())
        if algorithm.isRSA {
            // Read from the SPKI, so an id-RSASSA-PSS key keeps its parameters; from GnuTLS's
            // numbers when RSAKit's stricter DER reader refuses the encoding.
            if let spki, let key = try? RSAPublicKey(derRepresentation: spki) {
                publicKey = key
            } else {
                let components = try parsed.rsaPublicComponents()
                publicKey = try? RSAPublicKey(modulus: components.modulus, publicExponent: components.exponent)
            }
        } else {
            publicKey = nil
        }
        signatureAlgorithmName = try parsed.signatureAlgorithmName() ?? parsed.signatureAlgorithmOID() ?? "unknown"
        fingerprint = RSAHashAlgorithm.sha256.hash(der)
        // The key's own fingerprint, so a certificate and its stored private key link up. The
        // key is read from the SPKI as the certificate encodes it (an RSA-PSS identifier kept
        // byte for byte), so for DER as openssl and pyca write it the two are the same bytes;
        // a non-RSA key, or one GnuTLS alone could read, gets the hash of the SPKI bytes.
        if let publicKey {
            publicKeyFingerprint = publicKey.fingerprint
        } else if let spki {
            publicKeyFingerprint = RSAKeyFingerprint(digest: RSAHashAlgorithm.sha256.hash(spki))
        } else {
            publicKeyFingerprint = nil
        }
        do {
            keyUsage = try parsed.keyUsage().map { X509Certificate.keyUsage(fromGnuTLSBits: $0.bits) }
        } catch is GnuTLSFailure {
            // GnuTLS refuses a non-minimal BIT STRING ("the given memory buffer is too short
            // to hold parameters"); OpenSSL and pyca/cryptography read its bits.
            keyUsage = try CertificateDERChecks.lenientKeyUsage(der)
        }
        extendedKeyUsage = try parsed.keyPurposeOIDs()?.map(ExtendedKeyUsage.init(oid:))
        subjectAlternativeNames = try parsed.subjectAltNames().map(X509Certificate.alternativeName)
        basicConstraints = try parsed.basicConstraints().map {
            BasicConstraints(
                isCertificateAuthority: $0.isCA, pathLengthConstraint: $0.pathLength, isCritical: $0.critical)
        }
        criticalExtensionOIDs = try parsed.extensions().filter(\.critical).map(\.oid)
        let emails =
            try X509Certificate.attributeStrings(parsed, X509Certificate.emailAddressOID)
            + subjectAlternativeNames.compactMap {
                if case let .emailAddress(address) = $0 { return address } else { return nil }
            }
        let organizations = try X509Certificate.attributeStrings(parsed, X509Certificate.organizationOID)
        let units = try X509Certificate.attributeStrings(parsed, X509Certificate.organizationalUnitOID)
        subjectSummary = commonNames.last ?? emails.first ?? organizations.first ?? units.first ?? subject
    }

    /// The subject attribute's values as text (unescaped).
    private static func attributeStrings(_ parsed: GnuTLSCertificate, _ oid: String) throws -> [String] {
        try parsed.subjectAttributeValues(oid: oid).compactMap(X509Certificate.directoryString)
    }

    /// The text of a DER DirectoryString (RFC 5280 §4.1.2.4) or IA5String: UTF8String,
    /// PrintableString, IA5String, TeletexString (read as ISO 8859-1, as most software
    /// does), BMPString (UTF-16BE), UniversalString (UTF-32BE). Nil for anything else.
    static func directoryString(_ tlv: [UInt8]) -> String? {
        guard let tag = tlv.first,
            let element = try? DERReader(tlv).element(at: 0, limit: tlv.count)
        else { return nil }
        let content = Array(tlv[element.content])
        switch tag {
        case 0x0C, 0x13, 0x16, 0x12, 0x1A:
            return String(decoding: content, as: UTF8.self)
        case 0x14:
            return String(String.UnicodeScalarView(content.map { Unicode.Scalar($0) }))
        case 0x1E:
            guard content.count % 2 == 0 else { return nil }
            let units = stride(from: 0, to: content.count, by: 2).map {
                UInt16(content[$0]) << 8 | UInt16(content[$0 + 1])
            }
            return String(decoding: units, as: UTF16.self)
        case 0x1C:
            guard content.count % 4 == 0 else { return nil }
            var scalars = String.UnicodeScalarView()
            for index in stride(from: 0, to: content.count, by: 4) {
                let value = content[index..<(index + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                guard let scalar = Unicode.Scalar(value) else { return nil }
                scalars.append(scalar)
            }
            return String(scalars)
        default:
            return nil
        }
    }

    /// A fresh GnuTLS object for this certificate (for chain verification).
    package func gnutlsCertificate() throws -> GnuTLSCertificate {
        try GnuTLSCertificate(der: derRepresentation)
    }

    // Attribute types (RFC 4519 / PKCS#9).
    static let commonNameOID = "2.5.4.3"
    static let organizationOID = "2.5.4.10"
    static let organizationalUnitOID = "2.5.4.11"
    static let emailAddressOID = "1.2.840.113549.1.9.1"

    /// GnuTLS's GNUTLS_KEY_* bits (digitalSignature = 128 ... decipherOnly = 32768) to RFC 5280 bit positions.
    static func keyUsage(fromGnuTLSBits bits: UInt32) -> KeyUsage {
        let table: [(UInt32, KeyUsage)] = [
            (128, .digitalSignature), (64, .nonRepudiation), (32, .keyEncipherment), (16, .dataEncipherment),
            (8, .keyAgreement), (4, .keyCertSign), (2, .cRLSign), (1, .encipherOnly), (32768, .decipherOnly)
        ]
        var usage: KeyUsage = []
        for (bit, value) in table where bits & bit != 0 { usage.insert(value) }
        return usage
    }

    /// GnuTLS SAN type numbers (GNUTLS_SAN_*) to ``SubjectAlternativeName``.
    static func alternativeName(_ entry: (type: UInt32, value: [UInt8])) -> SubjectAlternativeName {
        let text = String(decoding: entry.value, as: UTF8.self)
        switch entry.type {
        case 1: return .dnsName(text)
        case 2: return .emailAddress(text)
        case 3: return .uri(text)
        case 4: return .ipAddress(entry.value)
        case 6: return .directoryName(text)
        case 7: return .registeredID(text)
        default: return .other(text)
        }
    }

    /// PEM: "-----BEGIN CERTIFICATE-----", 64-column base64 lines, LF line ends (RFC 7468 §5).
    public var pemRepresentation: String {
        PEMDocument.encode(derRepresentation, label: "CERTIFICATE")
    }

    /// The serial number as lower-case hex digits (at least two).
    public var serialNumberHex: String { serialNumber.map(hexByte).joined() }

    /// The fingerprint as 64 lower-case hex digits.
    public var fingerprintHex: String { fingerprint.map(hexByte).joined() }

    /// Whether subject and issuer names are equal (a self-issued, usually a root, certificate).
    public var isSelfIssued: Bool { subject == issuer }

    /// Whether `date` lies within notBefore ... notAfter (both inclusive, RFC 5280 §4.1.2.5).
    public func isValid(at date: Date) -> Bool {
        date >= notValidBefore && date <= notValidAfter
    }

    /// "X509Certificate(subject summary, serial hex)".
    public var description: String { "X509Certificate(\(subjectSummary), serial \(serialNumberHex))" }

    /// Equal when the DER encodings are equal.
    public static func == (a: X509Certificate, b: X509Certificate) -> Bool {
        a.derRepresentation == b.derRepresentation
    }

    /// Hashes the fingerprint.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(fingerprint)
    }
}
