// nameConstraints (RFC 5280 §4.2.1.10) judged by RSAKit: GnuTLS 3.7.9 refuses names inside a
// permitted directoryName subtree and accepts some outside it (NIST PKITS 4.13: ten cases),
// and its URI constraints compare the whole URI. The extension and the subjectAltName DER are
// read here; directory names are compared under RFC 5280 §7.1 (X509Name).
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The permitted and excluded subtrees of one CA certificate's nameConstraints extension.
internal struct NameConstraints {
    /// permittedSubtrees' bases (minimum and maximum are not used: RFC 5280 says they must
    /// be 0 and absent).
    var permitted: [X509GeneralName] = []
    /// excludedSubtrees' bases.
    var excluded: [X509GeneralName] = []

    /// Read the extension's value:
    ///
    ///     NameConstraints ::= SEQUENCE {
    ///          permittedSubtrees       [0]     GeneralSubtrees OPTIONAL,
    ///          excludedSubtrees        [1]     GeneralSubtrees OPTIONAL }
    ///     GeneralSubtree ::= SEQUENCE { base GeneralName, minimum [0] DEFAULT 0, maximum [1] OPTIONAL }
    /// - Throws: `RSAError.malformedDER` for a broken encoding.
    init(der: [UInt8]) throws {
        let reader = DERReader(der)
        let top = try reader.topLevelElement(in: 0..<der.count, name: "nameConstraints")
        for field in try reader.sequence(top, what: "nameConstraints") {
            guard field.tag == 0xA0 || field.tag == 0xA1 else {
                throw RSAError.malformedDER(reason: "nameConstraints field \(field.tagName)", offset: field.offset)
            }
            var bases: [X509GeneralName] = []
            for subtree in try reader.children(of: field) {
                guard subtree.tag == DERTag.sequence, let base = try reader.children(of: subtree).first else {
                    throw RSAError.malformedDER(
                        reason: "GeneralSubtree is not a SEQUENCE with a base", offset: subtree.offset)
                }
                bases += try X509GeneralName.names(elements: [base], reader: reader)
            }
            if field.tag == 0xA0 { permitted = bases } else { excluded = bases }
        }
    }

    /// Whether every name of a certificate (its subject, when not empty, as a directoryName
    /// and its emailAddress attributes as rfc822Names; its subjectAltNames) is allowed: inside
    /// a permitted subtree of its form whenever permitted subtrees of that form exist, and
    /// inside no excluded subtree (RFC 5280 §6.1.3 (b), (c)).
    func permits(_ names: [X509GeneralName]) -> Bool {
        for name in names {
            let kind = name.constraintKind
            if excluded.contains(where: { $0.constraintKind == kind && name.isWithin($0) }) { return false }
            let sameKind = permitted.filter { $0.constraintKind == kind }
            if !sameKind.isEmpty && !sameKind.contains(where: { name.isWithin($0) }) { return false }
        }
        return true
    }
}

extension X509GeneralName {
    /// The form a constraint of this name applies to: its context tag number (1 rfc822Name,
    /// 2 dNSName, 4 directoryName, 6 uniformResourceIdentifier, 7 iPAddress, ...).
    var constraintKind: UInt8 {
        switch self {
        case .directoryName: return 4
        case .uniformResourceIdentifier: return 6
        case let .other(tag, _): return tag & 0x1F
        }
    }

    /// Whether this name lies inside the subtree whose base is `base` (of the same form):
    /// directoryName, when the base's RDNs begin it (§7.1 comparison); dNSName, the base or a
    /// name ending in "." + base; rfc822Name, the mailbox itself (base with "@"), a host
    /// ("example.com") or any host of a domain (".example.com"); URI, by its host as the
    /// rfc822Name host forms say; iPAddress, the address under the base's mask. Case is
    /// ignored in host names. Other forms: equal octets.
    func isWithin(_ base: X509GeneralName) -> Bool {
        switch (self, base) {
        case let (.directoryName(name), .directoryName(subtree)):
            guard subtree.rdns.count <= name.rdns.count else { return false }
            return X509Name(rdns: Array(name.rdns.prefix(subtree.rdns.count))).matches(subtree)
        case let (.uniformResourceIdentifier(uri), .uniformResourceIdentifier(constraint)):
            guard let host = Self.host(ofURI: uri) else { return false }
            return Self.hostMatches(host, constraint: constraint.lowercased())
        case let (.other(tag, content), .other(baseTag, baseContent)) where tag == baseTag:
            let value = String(decoding: content, as: UTF8.self).lowercased()
            let constraint = String(decoding: baseContent, as: UTF8.self).lowercased()
            switch tag {
            case 0x82:  // dNSName: the base, or more labels on its left
                let trimmed = constraint.hasPrefix(".") ? String(constraint.dropFirst()) : constraint
                return trimmed.isEmpty || value == trimmed || value.hasSuffix("." + trimmed)
            case 0x81:  // rfc822Name
                if constraint.contains("@") { return value == constraint }
                guard let at = value.lastIndex(of: "@") else { return false }
                return Self.hostMatches(String(value[value.index(after: at)...]), constraint: constraint)
            case 0x87:  // iPAddress: address and mask of the same family
                guard baseContent.count == 2 * content.count else { return false }
                return zip(content, zip(baseContent.prefix(content.count), baseContent.suffix(content.count)))
                    .allSatisfy { address, pair in address & pair.1 == pair.0 & pair.1 }
            default:
                return content == baseContent
            }
        default:
            return false
        }
    }

    /// A host against a host constraint: ".example.com" any host under it, else the host itself.
    private static func hostMatches(_ host: String, constraint: String) -> Bool {
        let host = host.lowercased()
        if constraint.hasPrefix(".") { return host.hasSuffix(constraint) }
        return host == constraint
    }

    /// The host of a URI with an authority ("scheme://[user@]host[:port]/..."), lowercased;
    /// nil when it has none (RFC 5280 §4.2.1.10: such a URI fails a URI constraint).
    private static func host(ofURI uri: String) -> String? {
        guard let schemeEnd = uri.firstRange(of: "://") else { return nil }
        var authority = uri[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            return authority.firstIndex(of: "]").map { String(authority[...$0]).lowercased() }
        }
        let host = authority.prefix { $0 != ":" }
        return host.isEmpty ? nil : host.lowercased()
    }
}

extension X509Certificate {
    /// The names nameConstraints judge (RFC 5280 §4.2.1.10, §6.1.3 (b)): the subject when it
    /// is not empty (a directoryName), each emailAddress attribute of the subject (an
    /// rfc822Name), and every subjectAltName (read from the extension's DER).
    /// - Throws: `RSAError` when the subject or subjectAltName cannot be read.
    func constrainedNames() throws -> [X509GeneralName] {
        var names: [X509GeneralName] = []
        let native = try gnutlsCertificate()
        if let subject = native.subjectName(), !subject.rdns.isEmpty {
            names.append(.directoryName(subject))
            for attribute in subject.rdns.joined() where attribute.oid == "1.2.840.113549.1.9.1" {
                names.append(.other(tag: 0x81, content: attribute.value))
            }
        }
        if let value = try native.extensionValue(oid: "2.5.29.17") {
            let reader = DERReader(value)
            let top = try reader.topLevelElement(in: 0..<value.count, name: "subjectAltName")
            names += try X509GeneralName.names(elements: reader.sequence(top, what: "subjectAltName"), reader: reader)
        }
        return names
    }

    /// The nameConstraints extension (2.5.29.30), nil when absent.
    /// - Throws: `RSAError.malformedDER` when it cannot be read.
    func nameConstraints() throws -> NameConstraints? {
        try gnutlsCertificate().extensionValue(oid: "2.5.29.30").map { try NameConstraints(der: $0) }
    }
}
