// CRL distribution points as RFC 5280 §6.3.3 (b) and (d) compare them: the certificate's
// cRLDistributionPoints (§4.2.1.13) against a CRL's issuingDistributionPoint (§5.2.5), by
// distribution point name and by the reasons each side covers. The DER is read here; the
// names inside a directoryName are decoded by GnuTLS (X509Name).

/// ReasonFlags (RFC 5280 §4.2.1.13): the revocation reasons a distribution point or a CRL
/// covers, bit i of the BIT STRING as bit i of ``rawValue`` (bit 0, "unused", is never set).
import RSAKitCore

internal struct X509ReasonFlags: OptionSet, Sendable, Hashable {
    let rawValue: UInt16
    init(rawValue: UInt16) { self.rawValue = rawValue & 0x1FE }

    static let keyCompromise = X509ReasonFlags(rawValue: 1 << 1)
    static let cACompromise = X509ReasonFlags(rawValue: 1 << 2)
    static let affiliationChanged = X509ReasonFlags(rawValue: 1 << 3)
    static let superseded = X509ReasonFlags(rawValue: 1 << 4)
    static let cessationOfOperation = X509ReasonFlags(rawValue: 1 << 5)
    static let certificateHold = X509ReasonFlags(rawValue: 1 << 6)
    static let privilegeWithdrawn = X509ReasonFlags(rawValue: 1 << 7)
    static let aACompromise = X509ReasonFlags(rawValue: 1 << 8)
    /// RFC 5280 §6.3.3's all-reasons: every named reason, bits 1 to 8.
    static let all = X509ReasonFlags(rawValue: 0x1FE)

    /// The names RFC 5280 gives bits 1 to 8, in bit order.
    private static let names = [
        "keyCompromise", "cACompromise", "affiliationChanged", "superseded",
        "cessationOfOperation", "certificateHold", "privilegeWithdrawn", "aACompromise"
    ]

    /// The reasons by name, comma-separated in bit order ("keyCompromise, cACompromise").
    var names: String {
        (1...8).filter { rawValue & (1 << $0) != 0 }.map { Self.names[$0 - 1] }.joined(separator: ", ")
    }

    /// Read the content octets of a BIT STRING (its first octet the count of unused bits,
    /// X.690 §8.6.2); bits past 8 are ignored.
    /// - Throws: `RSAError.malformedDER` when the content is empty or the unused count over 7.
    init(bitStringContent content: ArraySlice<UInt8>) throws {
        guard let unused = content.first, unused <= 7, content.count > 1 || unused == 0 else {
            throw RSAError.malformedDER(reason: "ReasonFlags is not a BIT STRING", offset: content.startIndex)
        }
        let octets = content.dropFirst()
        var value: UInt16 = 0
        for (index, octet) in octets.prefix(2).enumerated() {
            for bit in 0..<8 where octet & (0x80 >> bit) != 0 { value |= 1 << (index * 8 + bit) }
        }
        self.init(rawValue: value)
    }
}

/// A GeneralName (RFC 5280 §4.2.1.6) as distribution point matching compares it.
internal enum X509GeneralName: Equatable {
    /// directoryName [4]: compared under RFC 5280 §7.1 (``X509Name/matches(_:)``).
    case directoryName(X509Name)
    /// uniformResourceIdentifier [6]: compared as octets.
    case uniformResourceIdentifier(String)
    /// Any other form: its tag and content octets, compared as such.
    case other(tag: UInt8, content: [UInt8])

    /// Whether the two name the same thing.
    func matches(_ other: X509GeneralName) -> Bool {
        switch (self, other) {
        case let (.directoryName(a), .directoryName(b)): return a.matches(b)
        default: return self == other
        }
    }

    /// The GeneralName elements inside `parent` (a GeneralNames SEQUENCE, or an implicitly
    /// tagged one).
    /// - Throws: `RSAError.malformedDER` for a broken encoding or a directoryName GnuTLS
    ///   cannot decode.
    static func names(in parent: DERElement, reader: DERReader) throws -> [X509GeneralName] {
        try names(elements: reader.children(of: parent), reader: reader)
    }

    /// The GeneralName elements given, each decoded (see the cases).
    /// - Throws: `RSAError.malformedDER` for a directoryName GnuTLS cannot decode.
    static func names(elements: [DERElement], reader: DERReader) throws -> [X509GeneralName] {
        try elements.map { element in
            let content = Array(reader.bytes[element.content])
            switch element.tag {
            case 0xA4:
                guard let inner = try reader.children(of: element).first, inner.tag == DERTag.sequence else {
                    throw RSAError.malformedDER(reason: "directoryName is not a Name", offset: element.offset)
                }
                do {
                    return .directoryName(try X509Name(der: Array(reader.bytes[inner.offset..<inner.end])))
                } catch {
                    throw RSAError.malformedDER(reason: "a directoryName GnuTLS cannot read", offset: element.offset)
                }
            case 0x86:
                return .uniformResourceIdentifier(String(decoding: content, as: UTF8.self))
            default:
                return .other(tag: element.tag, content: content)
            }
        }
    }
}

/// DistributionPointName (RFC 5280 §4.2.1.13), kept as its DER: fullName [0] GeneralNames, or
/// nameRelativeToCRLIssuer [1] RelativeDistinguishedName (one RDN to append to the CRL
/// issuer's name).
internal struct DistributionPointName: Sendable, Hashable {
    /// The DER of the [0] or [1] element.
    let der: [UInt8]

    /// The names it stands for: the fullName's, or `crlIssuer` (the DER of a Name) with the
    /// relative RDN appended, as a directoryName.
    /// - Throws: `RSAError.malformedDER` for a broken encoding.
    func names(crlIssuer: [UInt8]?) throws -> [X509GeneralName] {
        let reader = DERReader(der)
        let top = try reader.element(at: 0, limit: der.count)
        switch top.tag {
        case 0xA0:
            return try X509GeneralName.names(in: top, reader: reader)
        case 0xA1:
            guard let crlIssuer else { return [] }
            let issuerReader = DERReader(crlIssuer)
            let issuer = try issuerReader.element(at: 0, limit: crlIssuer.count)
            let rdns = try issuerReader.children(of: issuer).map {
                DERValue.encoded(Array(crlIssuer[$0.offset..<$0.end]))
            }
            var relative = der
            relative[0] = DERTag.set  // [1] IMPLICIT RelativeDistinguishedName: the SET retagged
            let name = DERValue.sequence(rdns + [.encoded(relative)]).encoded()
            do {
                return [.directoryName(try X509Name(der: name))]
            } catch {
                throw RSAError.malformedDER(reason: "nameRelativeToCRLIssuer GnuTLS cannot read", offset: 0)
            }
        default:
            throw RSAError.malformedDER(
                reason: "DistributionPointName is neither fullName [0] nor nameRelativeToCRLIssuer [1]", offset: 0)
        }
    }

    /// The name inside a distributionPoint [0] field (an explicit wrapper around the CHOICE).
    static func inside(_ field: DERElement, reader: DERReader) throws -> DistributionPointName {
        let inner = try reader.children(of: field)
        guard inner.count == 1 else {
            throw RSAError.malformedDER(reason: "distributionPoint holds \(inner.count) names", offset: field.offset)
        }
        return DistributionPointName(der: Array(reader.bytes[inner[0].offset..<inner[0].end]))
    }
}

/// One DistributionPoint of a certificate's cRLDistributionPoints extension (RFC 5280
/// §4.2.1.13):
///
///     DistributionPoint ::= SEQUENCE {
///          distributionPoint       [0]     DistributionPointName OPTIONAL,
///          reasons                 [1]     ReasonFlags OPTIONAL,
///          cRLIssuer               [2]     GeneralNames OPTIONAL }
internal struct CRLDistributionPoint: Equatable {
    /// distributionPoint, nil when absent.
    var name: DistributionPointName?
    /// reasons, nil when absent (every reason).
    var reasons: X509ReasonFlags?
    /// cRLIssuer's names, nil when absent (the certificate's issuer issues the CRL).
    var crlIssuer: [X509GeneralName]?

    /// Read a cRLDistributionPoints extension's value (`SEQUENCE SIZE (1..MAX) OF DistributionPoint`).
    /// - Throws: `RSAError.malformedDER` for a broken encoding.
    static func list(extensionValue der: [UInt8]) throws -> [CRLDistributionPoint] {
        let reader = DERReader(der)
        let top = try reader.topLevelElement(in: 0..<der.count, name: "cRLDistributionPoints")
        return try reader.sequence(top, what: "cRLDistributionPoints").map { point in
            var result = CRLDistributionPoint()
            for field in try reader.sequence(point, what: "DistributionPoint") {
                switch field.tag {
                case 0xA0: result.name = try DistributionPointName.inside(field, reader: reader)
                case 0x81: result.reasons = try X509ReasonFlags(bitStringContent: der[field.content])
                case 0xA2: result.crlIssuer = try X509GeneralName.names(in: field, reader: reader)
                default:
                    throw RSAError.malformedDER(
                        reason: "DistributionPoint field \(field.tagName)", offset: field.offset)
                }
            }
            return result
        }
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
    /// distributionPoint, nil when absent.
    var distributionPoint: DistributionPointName?
    var onlyContainsUserCerts = false
    var onlyContainsCACerts = false
    /// onlySomeReasons, nil when absent (every reason).
    var onlySomeReasons: X509ReasonFlags?
    var indirectCRL = false
    var onlyContainsAttributeCerts = false

    /// The fields given, the others absent or FALSE (tests).
    init(
        distributionPoint: DistributionPointName? = nil, onlyContainsUserCerts: Bool = false,
        onlyContainsCACerts: Bool = false,
        onlySomeReasons: X509ReasonFlags? = nil, indirectCRL: Bool = false, onlyContainsAttributeCerts: Bool = false
    ) {
        self.distributionPoint = distributionPoint
        self.onlyContainsUserCerts = onlyContainsUserCerts
        self.onlyContainsCACerts = onlyContainsCACerts
        self.onlySomeReasons = onlySomeReasons
        self.indirectCRL = indirectCRL
        self.onlyContainsAttributeCerts = onlyContainsAttributeCerts
    }

    /// Read the extension's DER (the extnValue content).
    /// - Throws: `RSAError.malformedDER` for a broken encoding.
    init(der: [UInt8]) throws {
        let reader = DERReader(der)
        let top = try reader.element(at: 0, limit: der.count)
        guard top.tag == DERTag.sequence else {
            throw RSAError.malformedDER(reason: "issuingDistributionPoint is not a SEQUENCE", offset: 0)
        }
        for field in try reader.children(of: top) {
            // [1], [2], [4], [5] are IMPLICIT BOOLEANs (0x81...): one content octet, TRUE is nonzero.
            let isTrue = field.content.count == 1 && der[field.content.lowerBound] != 0
            switch field.tag {
            case 0xA0: distributionPoint = try DistributionPointName.inside(field, reader: reader)
            case 0x81: onlyContainsUserCerts = isTrue
            case 0x82: onlyContainsCACerts = isTrue
            case 0x83: onlySomeReasons = try X509ReasonFlags(bitStringContent: der[field.content])
            case 0x84: indirectCRL = isTrue
            case 0x85: onlyContainsAttributeCerts = isTrue
            default: break
            }
        }
    }

    /// Why a CRL with this extension does not cover `certificate` by the kind of certificate
    /// (RFC 5280 §6.3.3 (b)(2)(ii)-(iv)), nil when it may: onlyContainsUserCerts and a CA
    /// certificate, onlyContainsCACerts and another, or onlyContainsAttributeCerts. The
    /// distribution point names and reasons are ``CRLScope``'s.
    func exclusion(of certificate: X509Certificate) -> String? {
        let isCA = certificate.basicConstraints?.isCertificateAuthority == true
        if onlyContainsUserCerts && isCA { return "it covers end-entity certificates only (onlyContainsUserCerts)" }
        if onlyContainsCACerts && !isCA { return "it covers CA certificates only (onlyContainsCACerts)" }
        if onlyContainsAttributeCerts { return "it covers attribute certificates only (onlyContainsAttributeCerts)" }
        return nil
    }
}
