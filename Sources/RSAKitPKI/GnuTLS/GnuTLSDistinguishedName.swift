// Distinguished names (RFC 5280 §4.1.2.4) decoded by GnuTLS into their attributes, for
// RSAKit's own name comparison (X509Name, RFC 5280 §7.1).
import RSAKitCore
internal import CGnuTLS
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

internal enum GnuTLSDistinguishedName {
    /// The RDNs of a DER Name, each a list of (type OID dotted, "2.5.4.3"; value's ASN.1 tag
    /// number, value content octets) (`gnutls_x509_dn_import`, `gnutls_x509_dn_get_rdn_ava`).
    /// - Throws: `GnuTLSFailure` when GnuTLS cannot read the Name.
    static func attributes(der: [UInt8]) throws -> [[(oid: String, tag: UInt, value: [UInt8])]] {
        var dn: gnutls_x509_dn_t?
        try gnutlsCheck(gnutls_x509_dn_init(&dn), "gnutls_x509_dn_init")
        guard let dn else { throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_x509_dn_init") }
        defer { gnutls_x509_dn_deinit(dn) }
        try withDatum(der) { datum in try gnutlsCheck(gnutls_x509_dn_import(dn, datum), "gnutls_x509_dn_import") }
        func bytes(_ datum: gnutls_datum_t) -> [UInt8] {
            guard let data = datum.data, datum.size > 0 else { return [] }
            return Array(UnsafeBufferPointer(start: data, count: Int(datum.size)))
        }
        var rdns: [[(oid: String, tag: UInt, value: [UInt8])]] = []
        for irdn in 0..<Int32(64) {
            var rdn: [(oid: String, tag: UInt, value: [UInt8])] = []
            for iava in 0..<Int32(64) {
                var ava = gnutls_x509_ava_st()
                let code = gnutls_x509_dn_get_rdn_ava(dn, irdn, iava, &ava)
                if code == GNUTLS_E_ASN1_ELEMENT_NOT_FOUND || code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { break }
                try gnutlsCheck(code, "gnutls_x509_dn_get_rdn_ava")
                // The OID comes as its dotted string with a final NUL.
                let oid = String(decoding: bytes(ava.oid).prefix { $0 != 0 }, as: UTF8.self)
                rdn.append((oid, UInt(ava.value_tag), bytes(ava.value)))
            }
            if rdn.isEmpty { break }
            rdns.append(rdn)
        }
        return rdns
    }
}

extension GnuTLSCertificate {
    /// The issuer Name's DER (`gnutls_x509_crt_get_raw_issuer_dn`).
    func rawIssuerDN() throws -> [UInt8] {
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_x509_crt_get_raw_issuer_dn(handle, &datum), "gnutls_x509_crt_get_raw_issuer_dn")
        return takeDatum(&datum)
    }

    /// The subject Name's DER (`gnutls_x509_crt_get_raw_dn`).
    func rawSubjectDN() throws -> [UInt8] {
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_x509_crt_get_raw_dn(handle, &datum), "gnutls_x509_crt_get_raw_dn")
        return takeDatum(&datum)
    }
}

extension GnuTLSCRL {
    /// The issuer Name's DER (`gnutls_x509_crl_get_raw_issuer_dn`).
    func rawIssuerDN() throws -> [UInt8] {
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_x509_crl_get_raw_issuer_dn(handle, &datum), "gnutls_x509_crl_get_raw_issuer_dn")
        return takeDatum(&datum)
    }
}
