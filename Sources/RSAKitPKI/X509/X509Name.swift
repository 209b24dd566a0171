// Distinguished-name comparison as RFC 5280 §7.1 asks for it: attribute types by OID, and
// PrintableString / UTF8String values prepared with the subset of the RFC 4518 LDAP string
// preparation that names in practice need (insignificant space handling, case folding)
// before they are compared. GnuTLS decodes the names; RSAKit decides whether they match.
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A distinguished name decoded into its relative distinguished names (RFC 5280 §4.1.2.4),
/// compared by ``matches(_:)`` under RFC 5280 §7.1.
internal struct X509Name: Equatable {
    /// One AttributeTypeAndValue.
    struct Attribute: Equatable {
        /// The type's OID, dotted ("2.5.4.3", commonName).
        var oid: String
        /// The value's ASN.1 universal tag number (12 UTF8String, 19 PrintableString, ...).
        var tag: UInt
        /// The value's content octets.
        var value: [UInt8]
    }

    /// The RDNs in the order GnuTLS reads them; each a set of attributes (usually one).
    var rdns: [[Attribute]]

    /// The universal tag numbers of the string types whose values are prepared (RFC 4518)
    /// before comparison: UTF8String (12) and PrintableString (19), which RFC 5280 §7.1
    /// requires implementations to handle. Other types compare as tag and octets.
    static let preparedTags: Set<UInt> = [12, 19]

    /// Decode the DER of a Name through GnuTLS.
    /// - Throws: `RSAError.malformedCertificate(reason:)` when GnuTLS cannot read it.
    init(der: [UInt8]) throws {
        do {
            rdns = try GnuTLSDistinguishedName.attributes(der: der).map {
                $0.map { Attribute(oid: $0.oid, tag: $0.tag, value: $0.value) }
            }
        } catch let failure as GnuTLSFailure {
            throw RSAError.malformedCertificate(
                reason: "a distinguished name GnuTLS cannot read: \(failure.description)")
        }
    }

    /// A name of the given RDNs (tests).
    init(rdns: [[Attribute]]) {
        self.rdns = rdns
    }

    /// Whether the two names match under RFC 5280 §7.1: the same number of RDNs, in the same
    /// order, each holding the same attributes (in any order within the RDN), types equal by
    /// OID and values equal after ``prepared(_:)`` (PrintableString and UTF8String values
    /// compare with each other) or, for other types, equal tag and octets.
    func matches(_ other: X509Name) -> Bool {
        guard rdns.count == other.rdns.count else { return false }
        for (mine, theirs) in zip(rdns, other.rdns) {
            guard mine.count == theirs.count else { return false }
            var unmatched = theirs
            for attribute in mine {
                guard let index = unmatched.firstIndex(where: { Self.valuesMatch(attribute, $0) }) else { return false }
                unmatched.remove(at: index)
            }
        }
        return true
    }

    /// Whether two attributes have the same type and, after preparation, the same value.
    static func valuesMatch(_ a: Attribute, _ b: Attribute) -> Bool {
        guard a.oid == b.oid else { return false }
        if preparedTags.contains(a.tag) && preparedTags.contains(b.tag) {
            guard let x = prepared(a.value), let y = prepared(b.value) else {
                return a.tag == b.tag && a.value == b.value
            }
            return x == y
        }
        return a.tag == b.tag && a.value == b.value
    }

    /// The RFC 4518 preparation subset of one string value (UTF-8 octets): nil when the octets
    /// are not UTF-8. Steps (RFC 4518 §2): map (§2.2: the characters mapped to nothing, such as
    /// SOFT HYPHEN and ZERO WIDTH SPACE, are removed; every other space character becomes
    /// SPACE), fold case (§2.2, with Swift's full Unicode lowercasing standing in for the
    /// case-folding table), then insignificant space handling (§2.6.1: no leading or trailing
    /// spaces, every inner run of spaces one space). NOTE: NFKC normalization (§2.3) and the
    /// prohibited-character check (§2.4) are not done: FoundationEssentials has no NFKC, so
    /// composed and decomposed forms of one character do not match.
    /// - Returns: the prepared string, e.g. "  Test  CA " and "test ca" both give "test ca".
    static func prepared(_ octets: [UInt8]) -> String? {
        guard let string = String(validating: octets, as: UTF8.self) else { return nil }
        var mapped = String.UnicodeScalarView()
        for scalar in string.unicodeScalars {
            switch scalar.value {
            case 0x00AD, 0x1806, 0x034F, 0x180B...0x180D, 0xFE00...0xFE0F, 0xFFFC, 0x200B, 0x200C, 0x200D, 0x2060,
                0xFEFF:
                continue  // mapped to nothing (RFC 3454 table B.1, RFC 4518 §2.2)
            case 0x0009...0x000D, 0x0085:
                mapped.append(" ")  // control characters mapped to SPACE (RFC 4518 §2.2)
            default:
                mapped.append(scalar.properties.isWhitespace ? " " : scalar)
            }
        }
        return String(mapped).lowercased().split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }
}

extension GnuTLSCertificate {
    /// The subject, decoded for RFC 5280 §7.1 comparison; nil when GnuTLS cannot read it.
    func subjectName() -> X509Name? {
        (try? rawSubjectDN()).flatMap { try? X509Name(der: $0) }
    }

    /// The issuer, decoded for RFC 5280 §7.1 comparison; nil when GnuTLS cannot read it.
    func issuerName() -> X509Name? {
        (try? rawIssuerDN()).flatMap { try? X509Name(der: $0) }
    }
}
