// The entry extensions of a CRL that trust evaluation needs (RFC 5280 §5.3): in an indirect
// CRL each revoked certificate belongs to the issuer named by its certificateIssuer entry
// extension, or by the nearest earlier entry's, or else to the CRL issuer (§5.3.3); in a delta
// CRL an entry whose reasonCode is removeFromCRL releases a certificate (§5.3.1). GnuTLS reads
// a CRL's entries without their extensions, so the revokedCertificates list is read here.

/// One entry of a CRL: the serial, the issuer it belongs to and its reasonCode.
import RSAKitCore

internal struct IndirectCRLEntry: Sendable, Hashable {
    /// userCertificate's content octets, two's complement, as encoded.
    let serialNumberContents: [UInt8]
    /// The DER of the directoryName its certificateIssuer names (its own, or the nearest
    /// earlier entry's); nil: the CRL issuer's certificate.
    let certificateIssuer: [UInt8]?
    /// The reasonCode entry extension's value (RFC 5280 §5.3.1: 8 is removeFromCRL), nil
    /// when absent.
    let reasonCode: UInt8?

    /// The entries of the CertificateList `der`, in order (RFC 5280 §5.1: TBSCertList's
    /// optional revokedCertificates, after thisUpdate and the optional nextUpdate).
    /// - Throws: `RSAError.malformedDER` when the structure is not RFC 5280's, or a
    ///   certificateIssuer names no directoryName.
    static func entries(of der: [UInt8]) throws -> [IndirectCRLEntry] {
        let reader = DERReader(der)
        let top = try reader.element(at: 0, limit: der.count)
        guard let tbs = try reader.children(of: top).first else {
            throw RSAError.malformedDER(reason: "CertificateList is empty", offset: 0)
        }
        var fields = try reader.sequence(tbs, what: "TBSCertList")[...]
        if fields.first?.tag == DERTag.integer { fields = fields.dropFirst() }  // version
        fields = fields.dropFirst(3)  // signature, issuer, thisUpdate
        if let next = fields.first, next.tag == 0x17 || next.tag == 0x18 { fields = fields.dropFirst() }  // nextUpdate
        guard let list = fields.first, list.tag == DERTag.sequence else { return [] }
        var current: [UInt8]?
        return try reader.children(of: list).map { entry in
            let parts = try reader.sequence(entry, what: "revokedCertificates entry")
            guard parts.count >= 2, parts[0].tag == DERTag.integer else {
                throw RSAError.malformedDER(
                    reason: "revokedCertificates entry without userCertificate", offset: entry.offset)
            }
            var reason: UInt8?
            if parts.count > 2 {
                if let issuer = try certificateIssuer(in: parts[2], reader: reader) { current = issuer }
                reason = try reasonCode(in: parts[2], reader: reader)
            }
            return IndirectCRLEntry(
                serialNumberContents: Array(der[parts[0].content]), certificateIssuer: current, reasonCode: reason)
        }
    }

    /// The value of a reasonCode extension (2.5.29.21, an ENUMERATED) among `extensions`, nil
    /// when there is none.
    private static func reasonCode(in extensions: DERElement, reader: DERReader) throws -> UInt8? {
        for field in try reader.sequence(extensions, what: "crlEntryExtensions") {
            let parts = try reader.sequence(field, what: "Extension")
            guard parts.count >= 2, parts[0].tag == DERTag.objectIdentifier,
                dottedObjectIdentifier(reader.bytes[parts[0].content]) == "2.5.29.21", let value = parts.last,
                value.tag == DERTag.octetString
            else { continue }
            let inner = DERReader(Array(reader.bytes[value.content]))
            let code = try inner.element(at: 0, limit: inner.bytes.count)
            guard code.tag == 0x0A, code.content.count == 1 else {
                throw RSAError.malformedDER(reason: "reasonCode is not a one-octet ENUMERATED", offset: field.offset)
            }
            return inner.bytes[code.content.lowerBound]
        }
        return nil
    }

    /// The directoryName DER of a certificateIssuer extension (2.5.29.29) among `extensions`,
    /// nil when there is none.
    private static func certificateIssuer(in extensions: DERElement, reader: DERReader) throws -> [UInt8]? {
        for field in try reader.sequence(extensions, what: "crlEntryExtensions") {
            let parts = try reader.sequence(field, what: "Extension")
            guard parts.count >= 2, parts[0].tag == DERTag.objectIdentifier,
                dottedObjectIdentifier(reader.bytes[parts[0].content]) == "2.5.29.29", let value = parts.last,
                value.tag == DERTag.octetString
            else { continue }
            let inner = DERReader(Array(reader.bytes[value.content]))
            let names = try inner.element(at: 0, limit: inner.bytes.count)
            for name in try inner.sequence(names, what: "certificateIssuer") where name.tag == 0xA4 {
                guard let directory = try inner.children(of: name).first else { break }
                return Array(inner.bytes[directory.offset..<directory.end])
            }
            throw RSAError.malformedDER(reason: "certificateIssuer names no directoryName", offset: field.offset)
        }
        return nil
    }
}
