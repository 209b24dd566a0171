// What RSAKit reads from a certificate's raw DER itself, because GnuTLS is lenient or
// unhelpful there (RFC 5280 §4.1):
//
//   Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }
//   TBSCertificate ::= SEQUENCE { version [0] EXPLICIT OPTIONAL, serialNumber, signature,
//       issuer, validity, subject, subjectPublicKeyInfo, issuerUniqueID [1] OPTIONAL,
//       subjectUniqueID [2] OPTIONAL, extensions [3] EXPLICIT OPTIONAL }
//   Validity ::= SEQUENCE { notBefore Time, notAfter Time }
//   Time ::= CHOICE { utcTime UTCTime, generalTime GeneralizedTime }

/// Checks on a certificate's DER that GnuTLS does not make.
import RSAKitCore

internal enum CertificateDERChecks {
    /// The keyUsage extension's OID (RFC 5280 §4.2.1.3), content octets.
    private static let keyUsageOID: [UInt8] = [0x55, 0x1D, 0x0F]

    /// The elements of TBSCertificate, or nil when the outer structure is not as RFC 5280
    /// says (GnuTLS then reports it).
    private static func tbsFields(_ reader: DERReader) -> [DERElement]? {
        guard let top = try? reader.element(at: 0, limit: reader.bytes.count),
            let outer = try? reader.children(of: top), let tbs = outer.first,
            tbs.tag == DERTag.sequence, let fields = try? reader.children(of: tbs)
        else { return nil }
        return fields
    }

    /// The elements of TBSCertificate after the optional `version [0]`: serialNumber first,
    /// then signature, issuer, validity, subject, subjectPublicKeyInfo and the rest; nil
    /// when the outer structure is not as RFC 5280 says.
    static func tbsFieldsAfterVersion(_ der: [UInt8]) -> [DERElement]? {
        guard let fields = tbsFields(DERReader(der)) else { return nil }
        let first = fields.first?.tag == DERTag.contextSpecific(0, constructed: true) ? 1 : 0
        return Array(fields.dropFirst(first))
    }

    /// The tbsCertificate element exactly as encoded (tag, length and content): the bytes
    /// the certificate's signature covers (RFC 5280 §4.1.1.3), or nil when the outer
    /// structure is not as RFC 5280 says.
    static func tbsCertificate(_ der: [UInt8]) -> [UInt8]? {
        let reader = DERReader(der)
        guard let top = try? reader.element(at: 0, limit: der.count),
            let outer = try? reader.children(of: top), let tbs = outer.first, tbs.tag == DERTag.sequence
        else { return nil }
        return Array(der[tbs.offset..<tbs.end])
    }

    /// The subjectPublicKeyInfo element exactly as encoded (GnuTLS's `gnutls_pubkey_export2`
    /// re-encodes it, and drops or rewrites id-RSASSA-PSS parameters), or nil when the
    /// structure is not as RFC 5280 says.
    /// - Parameter der: one DER `Certificate`.
    /// - Returns: the SPKI's DER bytes (tag, length and content).
    static func subjectPublicKeyInfo(_ der: [UInt8]) -> [UInt8]? {
        let reader = DERReader(der)
        guard let fields = tbsFields(reader) else { return nil }
        // version [0] is optional; subjectPublicKeyInfo is the sixth field after it.
        let first = fields.first?.tag == DERTag.contextSpecific(0, constructed: true) ? 1 : 0
        guard fields.count > first + 5 else { return nil }
        let spki = fields[first + 5]
        guard spki.tag == DERTag.sequence else { return nil }
        return Array(der[spki.offset..<spki.end])
    }

    /// Refuse a validity time that is not in the one form RFC 5280 §4.1.2.5.1-2 allows:
    /// UTCTime exactly "YYMMDDHHMMSSZ" (13 characters), GeneralizedTime exactly
    /// "YYYYMMDDHHMMSSZ" (15 characters), digits and a final "Z". OpenSSL ("Bad time
    /// value") and pyca/cryptography refuse the others; GnuTLS reads some of them as a
    /// date their bytes do not say (a 15-character UTCTime).
    /// - Parameter der: one DER `Certificate`.
    /// - Throws: `RSAError.malformedCertificate(reason:)` naming the field and what is wrong.
    static func checkValidityTimes(_ der: [UInt8]) throws {
        let reader = DERReader(der)
        guard let fields = tbsFields(reader) else { return }
        // version [0] is optional; validity is the fourth field after it.
        let start = fields.first?.tag == DERTag.contextSpecific(0, constructed: true) ? 1 : 0
        guard fields.count > start + 3 else { return }
        let validity = fields[start + 3]
        guard validity.tag == DERTag.sequence, let times = try? reader.children(of: validity), times.count == 2 else {
            throw RSAError.malformedCertificate(
                reason: "its validity is not a SEQUENCE of notBefore and notAfter (RFC 5280 §4.1.2.5)")
        }
        for (time, name) in zip(times, ["notBefore", "notAfter"]) {
            let text = der[time.content]
            let expected: Int
            let form: String
            switch time.tag {
            case 0x17: expected = 13; form = "UTCTime YYMMDDHHMMSSZ"
            case 0x18: expected = 15; form = "GeneralizedTime YYYYMMDDHHMMSSZ"
            default:
                throw RSAError.malformedCertificate(
                    reason: "its \(name) is a \(time.tagName), not a UTCTime or GeneralizedTime (RFC 5280 §4.1.2.5)")
            }
            let digits = text.dropLast()
            guard text.count == expected, text.last == UInt8(ascii: "Z"),
                digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else {
                let shown = String(
                    decoding: text.prefix(32).map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
                throw RSAError.malformedCertificate(
                    reason:
                        "its \(name) time \"\(shown)\" (\(text.count) characters) is not of the form \(form) "
                        + "(\(expected) characters, RFC 5280 §4.1.2.5)"
                )
            }
        }
    }

    /// The keyUsage bits read from the extension's DER (RFC 5280 §4.2.1.3), for a BIT STRING
    /// GnuTLS refuses because it is not minimal (trailing zero octets, or unused bits not
    /// counted), as `openssl x509 -text` and pyca/cryptography read it.
    ///
    /// `KeyUsage ::= BIT STRING`; bit n (first octet's high bit is bit 0) becomes `1 << n`.
    /// - Parameter der: one DER `Certificate`.
    /// - Returns: the usage, or nil without a keyUsage extension.
    /// - Throws: `RSAError.malformedCertificate(reason:)` when the extension value is not a
    ///   BIT STRING at all (no unused-bits octet, more than 7 unused bits, set bits past 8).
    static func lenientKeyUsage(_ der: [UInt8]) throws -> X509Certificate.KeyUsage? {
        let reader = DERReader(der)
        let invalid = RSAError.malformedCertificate(
            reason: "the key usage extension is not a valid DER BIT STRING (RFC 5280 §4.2.1.3)")
        guard let fields = tbsFields(reader),
            let wrapper = fields.last(where: { $0.tag == DERTag.contextSpecific(3, constructed: true) }),
            let list = try? reader.children(of: wrapper).first, list.tag == DERTag.sequence,
            let extensions = try? reader.children(of: list)
        else { return nil }
        for element in extensions {
            guard let parts = try? reader.children(of: element), parts.count >= 2,
                parts[0].tag == DERTag.objectIdentifier, Array(der[parts[0].content]) == keyUsageOID
            else { continue }
            guard let value = parts.last, value.tag == DERTag.octetString,
                let bitString = try? reader.element(at: value.content.lowerBound, limit: value.end),
                bitString.tag == DERTag.bitString, bitString.end == value.end,
                let unused = bitString.content.first.map({ der[$0] }), unused <= 7
            else { throw invalid }
            let octets = der[(bitString.content.lowerBound + 1)..<bitString.end]
            guard !(octets.isEmpty && unused != 0) else { throw invalid }
            // Bits past decipherOnly (8) are not defined; refuse set ones rather than drop them.
            guard octets.dropFirst(2).allSatisfy({ $0 == 0 }) else { throw invalid }
            let first = UInt16(octets.first ?? 0), second = UInt16(octets.dropFirst().first ?? 0)
            var raw: UInt16 = 0
            for bit in 0..<8 where first & (0x80 >> bit) != 0 { raw |= 1 << bit }
            if second & 0x80 != 0 { raw |= 1 << 8 }
            return X509Certificate.KeyUsage(rawValue: raw)
        }
        return nil
    }
}
