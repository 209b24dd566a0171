// An owning wrapper over GnuTLS's `gnutls_x509_crl_t` (RFC 5280 §5 certificate revocation
// lists): import from DER, the fields X509CRL reads once, and the signature check against
// an issuer certificate.
import RSAKitCore
internal import CGnuTLS
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One parsed CRL, freed (`gnutls_x509_crl_deinit`) with the object.
package final class GnuTLSCRL {
    let handle: gnutls_x509_crl_t

    /// Parse one DER CertificateList (RFC 5280 §5.1).
    /// - Throws: `GnuTLSFailure` when GnuTLS rejects the encoding.
    package init(der: [UInt8]) throws {
        var handle: gnutls_x509_crl_t?
        try gnutlsCheck(gnutls_x509_crl_init(&handle), "gnutls_x509_crl_init")
        guard let handle else { throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_x509_crl_init") }
        self.handle = handle
        try withDatum(der) { datum in
            try gnutlsCheck(gnutls_x509_crl_import(handle, datum, GNUTLS_X509_FMT_DER), "gnutls_x509_crl_import")
        }
    }

    deinit {
        gnutls_x509_crl_deinit(handle)
    }

    /// The issuer DN, RFC 4514 (`gnutls_x509_crl_get_issuer_dn3`).
    func issuerDN() throws -> String {
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_x509_crl_get_issuer_dn3(handle, &datum, 0), "gnutls_x509_crl_get_issuer_dn3")
        return String(decoding: takeDatum(&datum), as: UTF8.self)
    }

    /// thisUpdate.
    var thisUpdate: Date { Date(timeIntervalSince1970: TimeInterval(gnutls_x509_crl_get_this_update(handle))) }

    /// nextUpdate, nil when the CRL has none.
    var nextUpdate: Date? {
        let time = gnutls_x509_crl_get_next_update(handle)
        return time == -1 ? nil : Date(timeIntervalSince1970: TimeInterval(time))
    }

    /// The cRLNumber extension's integer, big-endian, nil when absent.
    func number() throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 64)
        var size = buffer.count
        var critical: UInt32 = 0
        let code = buffer.withUnsafeMutableBytes {
            gnutls_x509_crl_get_number(handle, $0.baseAddress, &size, &critical)
        }
        if code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { return nil }
        try gnutlsCheck(code, "gnutls_x509_crl_get_number")
        return Array(buffer[0..<size])
    }

    /// Every CRL extension's OID and criticality, in order (RFC 5280 §5.2).
    func extensions() throws -> [(oid: String, critical: Bool)] {
        try gnutlsExtensionInfo("gnutls_x509_crl_get_extension_info") { index, buffer, size, critical in
            gnutls_x509_crl_get_extension_info(handle, index, buffer, size, critical)
        }
    }

    /// The extnValue content (the extension's own DER) of the first extension with `oid`
    /// (`gnutls_x509_crl_get_extension_data2`); nil when the CRL has none.
    func extensionValue(oid: String) throws -> [UInt8]? {
        guard let index = try extensions().firstIndex(where: { $0.oid == oid }) else { return nil }
        var datum = gnutls_datum_t()
        try gnutlsCheck(
            gnutls_x509_crl_get_extension_data2(handle, UInt32(index), &datum), "gnutls_x509_crl_get_extension_data2")
        return takeDatum(&datum)
    }

    /// The revoked certificates: serial number (big-endian, as encoded) and revocation date.
    func revokedEntries() throws -> [(serial: [UInt8], date: Date)] {
        let count = try gnutlsCheck(gnutls_x509_crl_get_crt_count(handle), "gnutls_x509_crl_get_crt_count")
        var entries: [(serial: [UInt8], date: Date)] = []
        entries.reserveCapacity(Int(count))
        for index in 0..<UInt32(count) {
            var serial = [UInt8](repeating: 0, count: 64)
            var size = serial.count
            var time: time_t = 0
            try gnutlsCheck(
                gnutls_x509_crl_get_crt_serial(handle, index, &serial, &size, &time), "gnutls_x509_crl_get_crt_serial")
            entries.append((Array(serial[0..<size]), Date(timeIntervalSince1970: TimeInterval(time))))
        }
        return entries
    }

    /// Whether `issuer` issued this CRL: its subject is the CRL's issuer name, it is a CA whose
    /// keyUsage (when present) has cRLSign, and the CRL's signature verifies with its key
    /// (`gnutls_x509_crl_verify` with only `issuer` as CA; the issuer's own validity is the
    /// chain's business, so time checks are off).
    package func isSigned(by issuer: GnuTLSCertificate) -> Bool {
        verifies(with: issuer, flags: 0)
    }

    /// Whether the CRL's signature verifies with `signer`'s key and `signer`'s subject is the
    /// CRL's issuer name, whatever `signer`'s basicConstraints and keyUsage say
    /// (`GNUTLS_VERIFY_DISABLE_CA_SIGN`): a CRL-signing certificate need not be a CA (RFC 5280
    /// §6.3.3 (f)); the caller checks its keyUsage.
    func signatureVerifies(with signer: GnuTLSCertificate) -> Bool {
        verifies(with: signer, flags: GNUTLS_VERIFY_DISABLE_CA_SIGN.rawValue)
    }

    /// Whether the CRL's signature verifies under `key`'s public key over `tbsCertList` (its
    /// DER, from the caller), with no name, CA or keyUsage check: for a CRL whose issuer name
    /// matches only under RFC 5280 §7.1, which GnuTLS's own comparison does not see.
    func signatureVerifies(tbsCertList: [UInt8], key: GnuTLSCertificate) throws -> Bool {
        let algorithm = gnutls_x509_crl_get_signature_algorithm(handle)
        guard
            let signature = gnutlsExactSizedQuery({ buffer, size in
                gnutls_x509_crl_get_signature(handle, buffer?.assumingMemoryBound(to: CChar.self), size)
            })
        else { return false }
        return try GnuTLSTrustList.publicKeyVerifies(key, algorithm: algorithm, data: tbsCertList, signature: signature)
    }

    private func verifies(with issuer: GnuTLSCertificate, flags extra: UInt32) -> Bool {
        guard gnutls_x509_crl_check_issuer(handle, issuer.handle) != 0 else { return false }
        var list: [gnutls_x509_crt_t?] = [issuer.handle]
        var status: UInt32 = 0
        let flags =
            UInt32(GNUTLS_VERIFY_DISABLE_TIME_CHECKS.rawValue | GNUTLS_VERIFY_DISABLE_TRUSTED_TIME_CHECKS.rawValue)
            | extra
        let code = list.withUnsafeMutableBufferPointer {
            gnutls_x509_crl_verify(handle, $0.baseAddress, 1, flags, &status)
        }
        // GnuTLS also flags a CRL past its nextUpdate or issued in the future; RSAKit checks
        // those dates itself against the verify date, so only the rest counts here.
        let dates =
            GNUTLS_CERT_REVOCATION_DATA_SUPERSEDED.rawValue | GNUTLS_CERT_REVOCATION_DATA_ISSUED_IN_FUTURE.rawValue
        let remaining = status & ~UInt32(dates)
        return code >= 0 && (remaining == 0 || remaining == GNUTLS_CERT_INVALID.rawValue && status & UInt32(dates) != 0)
    }

    /// Whether `issuer`'s subject is the CRL's issuer name (the signature aside).
    func namesIssuer(_ issuer: GnuTLSCertificate) -> Bool {
        gnutls_x509_crl_check_issuer(handle, issuer.handle) != 0
    }
}

extension GnuTLSCertificate {
    /// The URIs of the cRLDistributionPoints extension (RFC 5280 §4.2.1.13), in order
    /// (`gnutls_x509_crt_get_crl_dist_points`; other name forms are skipped).
    func crlDistributionPointURLs() -> [String] {
        var urls: [String] = []
        for seq in 0..<UInt32(64) {
            var buffer = [UInt8](repeating: 0, count: 2048)
            var size = buffer.count
            var reasons: UInt32 = 0
            let code = buffer.withUnsafeMutableBytes {
                gnutls_x509_crt_get_crl_dist_points(handle, seq, $0.baseAddress, &size, &reasons, nil)
            }
            if code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { break }
            guard code == Int32(GNUTLS_SAN_URI.rawValue) else { continue }
            urls.append(String(decoding: buffer[0..<min(size, buffer.count)], as: UTF8.self))
        }
        return urls
    }
}
