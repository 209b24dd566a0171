// Certificate revocation lists (RFC 5280 §5), parsed by GnuTLS: what trust evaluation
// needs to say "revoked", with the revocation date.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A certificate revocation list (X.509 v2 CRL, RFC 5280 §5), as `openssl ca -gencrl` writes
/// it. Immutable; parsing checks only the encoding: whether a CA signed it, and whether it is
/// current, is decided when a trust evaluation uses it (``RSATrust/crls``).
public struct X509CRL: Sendable, Hashable {
    /// One entry of revokedCertificates.
    public struct RevokedCertificate: Sendable, Hashable {
        /// The certificate's serialNumber, big-endian, as encoded (without a leading 0x00
        /// added by the DER sign rule only when the CRL encodes one).
        public let serialNumber: [UInt8]
        /// revocationDate.
        public let revocationDate: Date
    }

    /// The DER of the whole CertificateList.
    public let derRepresentation: [UInt8]
    /// The issuer name, RFC 4514 ("CN=RSAKit Test Intermediate,O=RSAKit Tests").
    public let issuer: String
    /// thisUpdate: when the CRL was issued.
    public let thisUpdate: Date
    /// nextUpdate: when the next CRL is due; a CRL used after it is stale. Nil when absent.
    public let nextUpdate: Date?
    /// The cRLNumber extension (RFC 5280 §5.2.3), big-endian; nil when absent.
    public let crlNumber: [UInt8]?
    /// The revoked certificates, in the CRL's order.
    public let revokedCertificates: [RevokedCertificate]
    /// The OIDs (dotted, "2.5.29.28") of the CRL's critical extensions (RFC 5280 §5.2), in order.
    public let criticalExtensionOIDs: [String]
    /// The issuingDistributionPoint extension (RFC 5280 §5.2.5), nil when absent.
    let issuingDistributionPoint: IssuingDistributionPoint?

    /// Parse one DER CertificateList.
    /// - Parameter derRepresentation: the DER, at most 16 MiB.
    /// - Throws: `RSAError.malformedCertificate(reason:)` naming what GnuTLS refused, or a
    ///   malformed issuingDistributionPoint extension (RFC 5280 §5.2.5).
    public init(derRepresentation: [UInt8]) throws {
        guard derRepresentation.count <= 16 * 1024 * 1024 else {
            throw RSAError.malformedCertificate(reason: "CRL of \(derRepresentation.count) bytes is over the 16 MiB limit")
        }
        do {
            let crl = try GnuTLSCRL(der: derRepresentation)
            self.derRepresentation = derRepresentation
            issuer = try crl.issuerDN()
            thisUpdate = crl.thisUpdate
            nextUpdate = crl.nextUpdate
            crlNumber = try crl.number()
            revokedCertificates = try crl.revokedEntries().map { RevokedCertificate(serialNumber: $0.serial, revocationDate: $0.date) }
            criticalExtensionOIDs = try crl.extensions().filter(\.critical).map(\.oid)
            issuingDistributionPoint = try crl.extensionValue(oid: "2.5.29.28").map { try IssuingDistributionPoint(der: $0) }
        } catch let failure as GnuTLSFailure {
            throw RSAError.malformedCertificate(reason: "not a CRL GnuTLS can read: \(failure.description)")
        } catch let RSAError.malformedDER(reason, offset) {
            throw RSAError.malformedCertificate(reason: "the CRL's issuingDistributionPoint is malformed: \(reason) at offset \(offset)")
        }
    }

    /// Every CRL in `bytes`: PEM ("-----BEGIN X509 CRL-----" blocks, any number) or one DER
    /// CertificateList.
    /// - Throws: `RSAError.malformedCertificate(reason:)` for input that holds no CRL or a
    ///   damaged one; `RSAError.malformedPEM` for broken PEM framing.
    public static func crls(from bytes: [UInt8]) throws -> [X509CRL] {
        guard !bytes.isEmpty else { throw RSAError.malformedCertificate(reason: "the CRL input is empty") }
        if PEMDocument.containsBeginLine(bytes) {
            let document = PEMDocument(scanning: bytes)
            let blocks = document.blocks.filter { $0.label == "X509 CRL" }
            guard !blocks.isEmpty else {
                throw RSAError.malformedCertificate(reason: "no X509 CRL block found (blocks: \(document.blocks.map { "\"\($0.label)\"" }.joined(separator: ", ")))")
            }
            return try blocks.map { try X509CRL(derRepresentation: try document.decode($0).der) }
        }
        return [try X509CRL(derRepresentation: bytes)]
    }

    /// Whether the certificate with `serialNumber` (big-endian, as encoded) is listed, and when.
    public func revocationDate(ofSerialNumber serialNumber: [UInt8]) -> Date? {
        let wanted = Self.withoutLeadingZeros(serialNumber)
        return revokedCertificates.first { Self.withoutLeadingZeros($0.serialNumber) == wanted }?.revocationDate
    }

    private static func withoutLeadingZeros(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        bytes.drop { $0 == 0 }
    }

    /// Whether the certificate whose serialNumber INTEGER encodes `contents` (the content
    /// octets, two's complement, as ``X509Certificate/serialNumberDER`` holds them after tag and
    /// length) is listed, and when. Compares signed values (RFC 5280 §4.1.2.2 allows negative
    /// serials): 0x00FF (255) and 0xFF (-1) differ, a redundant leading 0x00 or 0xFF does not
    /// count (NIST PKITS 4.4.14, 4.4.15).
    func revocationDate(ofSerialNumberContents contents: [UInt8]) -> Date? {
        let wanted = Self.minimalTwosComplement(contents)
        return revokedCertificates.first { Self.minimalTwosComplement($0.serialNumber) == wanted }?.revocationDate
    }

    /// `bytes` without the leading octets that only extend the sign (X.690 §8.3.2).
    static func minimalTwosComplement(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        var slice = bytes[...]
        while slice.count > 1, let first = slice.first {
            let second = slice[slice.startIndex + 1]
            guard (first == 0x00 && second < 0x80) || (first == 0xFF && second >= 0x80) else { break }
            slice = slice.dropFirst()
        }
        return slice
    }

    /// The CRL extensions trust evaluation processes: cRLNumber (RFC 5280 §5.2.3, which CRL
    /// is newest) and authorityKeyIdentifier (§5.2.1, informational: the signer is found by
    /// name and signature).
    ///
    ///
    /// issuingDistributionPoint (2.5.29.28, critical by RFC 5280 §5.2.5) is processed in part
    /// (``IssuingDistributionPoint/exclusion(of:hasDistributionPoints:)``). NOTE: its
    /// distribution point names, onlySomeReasons and indirectCRL are not; refusing every CRL
    /// that carries one instead made thirteen valid NIST PKITS paths (4.5.3, 4.5.4, 4.5.6
    /// and ten of 4.14) fail for want of a CRL.
    static let processedExtensionOIDs: Set<String> = ["2.5.29.20", "2.5.29.35", "2.5.29.28"]

    /// The names RFC 5280 §5.2 gives the CRL extensions, by OID.
    private static let extensionNames = [
        "2.5.29.35": "authorityKeyIdentifier", "2.5.29.18": "issuerAltName", "2.5.29.20": "cRLNumber",
        "2.5.29.27": "deltaCRLIndicator", "2.5.29.28": "issuingDistributionPoint", "2.5.29.46": "freshestCRL",
        "1.3.6.1.5.5.7.1.1": "authorityInfoAccess",
    ]

    /// The critical extensions trust evaluation does not process, each named with its OID
    /// ("issuingDistributionPoint (2.5.29.28)", or the OID alone when RFC 5280 does not name
    /// it): a CRL carrying one is not used (RFC 5280 §5.2: a critical extension the user
    /// does not process makes the CRL unusable for revocation). Empty for a usable CRL.
    var unprocessedCriticalExtensions: [String] {
        criticalExtensionOIDs.filter { !Self.processedExtensionOIDs.contains($0) }
            .map { oid in Self.extensionNames[oid].map { "\($0) (\(oid))" } ?? oid }
    }
}

/// The scope fields of an issuingDistributionPoint extension (RFC 5280 §5.2.5):
///
///     IssuingDistributionPoint ::= SEQUENCE {
///          distributionPoint          [0] DistributionPointName OPTIONAL,
///          onlyContainsUserCerts      [1] BOOLEAN DEFAULT FALSE,
///          onlyContainsCACerts        [2] BOOLEAN DEFAULT FALSE,
///          onlySomeReasons            [3] ReasonFlags OPTIONAL,
///          indirectCRL                [4] BOOLEAN DEFAULT FALSE,
///          onlyContainsAttributeCerts [5] BOOLEAN DEFAULT FALSE }
struct IssuingDistributionPoint: Sendable, Hashable {
    /// Whether distributionPoint is present (the names themselves are not read).
    var hasDistributionPoint = false
    var onlyContainsUserCerts = false
    var onlyContainsCACerts = false
    /// Whether onlySomeReasons is present.
    var hasOnlySomeReasons = false
    var indirectCRL = false
    var onlyContainsAttributeCerts = false

    /// The fields given, the others absent or FALSE (tests).
    init(hasDistributionPoint: Bool = false, onlyContainsUserCerts: Bool = false, onlyContainsCACerts: Bool = false,
         hasOnlySomeReasons: Bool = false, indirectCRL: Bool = false, onlyContainsAttributeCerts: Bool = false) {
        self.hasDistributionPoint = hasDistributionPoint
        self.onlyContainsUserCerts = onlyContainsUserCerts
        self.onlyContainsCACerts = onlyContainsCACerts
        self.hasOnlySomeReasons = hasOnlySomeReasons
        self.indirectCRL = indirectCRL
        self.onlyContainsAttributeCerts = onlyContainsAttributeCerts
    }

    /// Read the extension's DER (the extnValue content).
    /// - Throws: `RSAError.malformedDER` for a broken encoding.
    init(der: [UInt8]) throws {
        let reader = DERReader(der)
        let top = try reader.element(at: 0, limit: der.count)
        guard top.tag == DERTag.sequence else { throw RSAError.malformedDER(reason: "issuingDistributionPoint is not a SEQUENCE", offset: 0) }
        for field in try reader.children(of: top) {
            // [1], [2], [4], [5] are IMPLICIT BOOLEANs (0x81...): one content octet, TRUE is nonzero.
            let isTrue = field.content.count == 1 && der[field.content.lowerBound] != 0
            switch field.tag {
            case 0xA0: hasDistributionPoint = true
            case 0x81: onlyContainsUserCerts = isTrue
            case 0x82: onlyContainsCACerts = isTrue
            case 0x83: hasOnlySomeReasons = true
            case 0x84: indirectCRL = isTrue
            case 0x85: onlyContainsAttributeCerts = isTrue
            default: break
            }
        }
    }

    /// Why a CRL with this extension does not cover `certificate` (RFC 5280 §6.3.3 (b)(2)),
    /// nil when it may: onlyContainsUserCerts and a CA certificate, onlyContainsCACerts and
    /// another, onlyContainsAttributeCerts, or a distributionPoint named while the certificate
    /// has no cRLDistributionPoints (`hasDistributionPoints`) to match it.
    /// NOTE: distribution point names are not compared, and onlySomeReasons and indirectCRL
    /// are not processed: such a CRL is used as one covering every reason of its issuer.
    func exclusion(of certificate: X509Certificate, hasDistributionPoints: Bool) -> String? {
        let isCA = certificate.basicConstraints?.isCertificateAuthority == true
        if onlyContainsUserCerts && isCA { return "it covers end-entity certificates only (onlyContainsUserCerts)" }
        if onlyContainsCACerts && !isCA { return "it covers CA certificates only (onlyContainsCACerts)" }
        if onlyContainsAttributeCerts { return "it covers attribute certificates only (onlyContainsAttributeCerts)" }
        if hasDistributionPoint && !hasDistributionPoints {
            return "it is the CRL of a distribution point and the certificate names none (cRLDistributionPoints)"
        }
        return nil
    }
}
