// The certificate's issuer, subject and serial number exactly as encoded (RFC 5280 §4.1.2.2,
// §4.1.2.4, §4.1.2.6), for protocols that compare names byte for byte: PKCS#11's CKA_ISSUER,
// CKA_SUBJECT and CKA_SERIAL_NUMBER (the rsakit PKCS#11 module), PKCS#7 IssuerAndSerialNumber.

import RSAKitCore

extension X509Certificate {
    /// The issuer Name exactly as the certificate encodes it: the DER `Name` SEQUENCE, tag
    /// and length included (RFC 5280 §4.1.2.4), as `openssl x509 -noout -issuer -nameopt
    /// RFC2253` prints in text and `CKA_ISSUER` holds in PKCS#11.
    ///
    /// - Returns: the element's bytes (starts with 0x30), or nil when the TBSCertificate is not
    ///   laid out as RFC 5280 says (GnuTLS read it anyway).
    /// - Note: Public data; not constant-time.
    public var issuerDER: [UInt8]? { Self.tbsField(derRepresentation, index: 2, tag: DERTag.sequence) }

    /// The subject Name exactly as the certificate encodes it: the DER `Name` SEQUENCE, tag
    /// and length included (RFC 5280 §4.1.2.6); PKCS#11's `CKA_SUBJECT`.
    ///
    /// - Returns: the element's bytes (starts with 0x30), or nil as for ``issuerDER``.
    /// - Note: Public data; not constant-time.
    public var subjectDER: [UInt8]? { Self.tbsField(derRepresentation, index: 4, tag: DERTag.sequence) }

    /// The serialNumber INTEGER exactly as the certificate encodes it, tag and length
    /// included (RFC 5280 §4.1.2.2): PKCS#11's `CKA_SERIAL_NUMBER` ("DER-encoding of the
    /// certificate serial number"). ``serialNumber`` is its magnitude without the encoding.
    ///
    /// - Returns: the element's bytes (starts with 0x02), or nil as for ``issuerDER``.
    /// - Note: Public data; not constant-time.
    public var serialNumberDER: [UInt8]? { Self.tbsField(derRepresentation, index: 0, tag: DERTag.integer) }

    /// Field `index` of TBSCertificate counted after the optional `version [0]`
    /// (0 serialNumber, 1 signature, 2 issuer, 3 validity, 4 subject, 5 subjectPublicKeyInfo),
    /// when it has tag `tag`.
    private static func tbsField(_ der: [UInt8], index: Int, tag: UInt8) -> [UInt8]? {
        guard let fields = CertificateDERChecks.tbsFieldsAfterVersion(der), index < fields.count,
            fields[index].tag == tag
        else { return nil }
        return Array(der[fields[index].offset..<fields[index].end])
    }
}
