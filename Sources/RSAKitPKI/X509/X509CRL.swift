// Certificate revocation lists (RFC 5280 §5), parsed by GnuTLS: what trust evaluation
// needs to say "revoked", with the revocation date.
import RSAKitCore
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
    /// For an indirect CRL (issuingDistributionPoint's indirectCRL), the issuer each entry of
    /// ``revokedCertificates`` belongs to, in the same order: the DER of the Name its
    /// certificateIssuer extension gives (RFC 5280 §5.3.3, carried over to later entries),
    /// nil for the CRL issuer. Nil for a direct CRL.
    let entryIssuers: [[UInt8]?]?
    /// For a delta CRL (RFC 5280 §5.2.4), its deltaCRLIndicator: the cRLNumber of the oldest
    /// complete CRL it updates (big-endian INTEGER content); nil for a complete CRL.
    package let baseCRLNumber: [UInt8]?
    /// For a delta CRL, the serials (content octets, as encoded) its entries release: reasonCode
    /// removeFromCRL (RFC 5280 §5.3.1); empty otherwise.
    let removedFromCRL: [[UInt8]]

    /// Parse one DER CertificateList.
    /// - Parameter derRepresentation: the DER, at most 16 MiB.
    /// - Throws: `RSAError.malformedCertificate(reason:)` naming what GnuTLS refused, or a
    ///   malformed issuingDistributionPoint extension (RFC 5280 §5.2.5).
    public init(derRepresentation: [UInt8]) throws {
        guard derRepresentation.count <= 16 * 1024 * 1024 else {
            throw RSAError.malformedCertificate(
                reason: "CRL of \(derRepresentation.count) bytes is over the 16 MiB limit")
        }
        do {
            let crl = try GnuTLSCRL(der: derRepresentation)
            self.derRepresentation = derRepresentation
            issuer = try crl.issuerDN()
            thisUpdate = crl.thisUpdate
            nextUpdate = crl.nextUpdate
            crlNumber = try crl.number()
            revokedCertificates = try crl.revokedEntries().map {
                RevokedCertificate(serialNumber: $0.serial, revocationDate: $0.date)
            }
            criticalExtensionOIDs = try crl.extensions().filter(\.critical).map(\.oid)
            issuingDistributionPoint = try crl.extensionValue(oid: "2.5.29.28").map {
                try IssuingDistributionPoint(der: $0)
            }
            baseCRLNumber = try crl.extensionValue(oid: "2.5.29.27").map {
                try Self.integerContent($0, what: "deltaCRLIndicator")
            }
            if issuingDistributionPoint?.indirectCRL == true || baseCRLNumber != nil {
                let entries = try IndirectCRLEntry.entries(of: derRepresentation)
                guard entries.count == revokedCertificates.count,
                    zip(entries, revokedCertificates).allSatisfy({
                        Self.minimalTwosComplement($0.serialNumberContents)
                            == Self.minimalTwosComplement($1.serialNumber)
                    })
                else {
                    throw RSAError.malformedCertificate(
                        reason: "the indirect CRL's entries read differently by GnuTLS and by RSAKit")
                }
                entryIssuers = issuingDistributionPoint?.indirectCRL == true ? entries.map(\.certificateIssuer) : nil
                removedFromCRL = entries.filter { $0.reasonCode == 8 }.map(\.serialNumberContents)
            } else {
                entryIssuers = nil
                removedFromCRL = []
            }
        } catch let failure as GnuTLSFailure {
            throw RSAError.malformedCertificate(reason: "not a CRL GnuTLS can read: \(failure.description)")
        } catch let RSAError.malformedDER(reason, offset) {
            throw RSAError.malformedCertificate(
                reason:
                    "the CRL's issuingDistributionPoint or indirect entries are malformed: \(reason) at offset "
                    + "\(offset)"
            )
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
                throw RSAError.malformedCertificate(
                    reason:
                        "no X509 CRL block found (blocks: "
                        + "\(document.blocks.map { "\"\($0.label)\"" }.joined(separator: ", ")))"
                )
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

    /// The content octets of the DER INTEGER `der` (a CRL extension's value).
    /// - Throws: `RSAError.malformedDER` when it is not one INTEGER.
    private static func integerContent(_ der: [UInt8], what: String) throws -> [UInt8] {
        let reader = DERReader(der)
        let top = try reader.topLevelElement(in: 0..<der.count, name: what)
        guard top.tag == DERTag.integer, !top.content.isEmpty else {
            throw RSAError.malformedDER(reason: "\(what) is not an INTEGER", offset: 0)
        }
        return Array(der[top.content])
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
    /// issuingDistributionPoint (2.5.29.28, critical by RFC 5280 §5.2.5) is processed: the
    /// kinds of certificate it covers, its distribution point names and onlySomeReasons
    /// (``CRLScope``), and indirectCRL (the entries' issuers, ``entryIssuers``).
    /// deltaCRLIndicator (2.5.29.27, §5.2.4): a delta CRL is used only on top of a current
    /// complete CRL of the same scope that it updates (``baseCRLNumber``).
    static let processedExtensionOIDs: Set<String> = ["2.5.29.20", "2.5.29.35", "2.5.29.28", "2.5.29.27"]

    /// The names RFC 5280 §5.2 gives the CRL extensions, by OID.
    private static let extensionNames = [
        "2.5.29.35": "authorityKeyIdentifier", "2.5.29.18": "issuerAltName", "2.5.29.20": "cRLNumber",
        "2.5.29.27": "deltaCRLIndicator", "2.5.29.28": "issuingDistributionPoint", "2.5.29.46": "freshestCRL",
        "1.3.6.1.5.5.7.1.1": "authorityInfoAccess"
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
