// OCSP (RFC 6960) over GnuTLS's gnutls/ocsp.h: the request for one certificate with a nonce,
// the response's fields, and its signature checked against the issuer (directly, or through
// a delegated responder certificate carrying id-kp-OCSPSigning, RFC 6960 §4.2.2.2).
import RSAKitCore
internal import CGnuTLS
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An OCSPRequest (RFC 6960 §4.1) for one certificate: CertID with SHA-1 hashes of the
/// issuer's name and key (what every responder accepts, RFC 5019 §2.1.1) and a random
/// 32-byte nonce extension (RFC 8954 allows 1-32 bytes; §4.4.1).
internal struct GnuTLSOCSPRequest {
    /// The DER to POST.
    let der: [UInt8]
    /// The nonce's value as GnuTLS encoded it, compared with the response's.
    let nonce: [UInt8]

    /// - Throws: `GnuTLSFailure` from the gnutls_ocsp_req_* calls.
    init(certificate: GnuTLSCertificate, issuer: GnuTLSCertificate) throws {
        var request: gnutls_ocsp_req_t?
        try gnutlsCheck(gnutls_ocsp_req_init(&request), "gnutls_ocsp_req_init")
        guard let request else { throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_ocsp_req_init") }
        defer { gnutls_ocsp_req_deinit(request) }
        try gnutlsCheck(
            gnutls_ocsp_req_add_cert(request, GNUTLS_DIG_SHA1, issuer.handle, certificate.handle),
            "gnutls_ocsp_req_add_cert")
        try gnutlsCheck(gnutls_ocsp_req_randomize_nonce(request), "gnutls_ocsp_req_randomize_nonce")
        var nonceDatum = gnutls_datum_t()
        try gnutlsCheck(gnutls_ocsp_req_get_nonce(request, nil, &nonceDatum), "gnutls_ocsp_req_get_nonce")
        nonce = takeDatum(&nonceDatum)
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_ocsp_req_export(request, &datum), "gnutls_ocsp_req_export")
        der = takeDatum(&datum)
    }
}

/// One parsed OCSPResponse, freed with the object.
package final class GnuTLSOCSPResponse {
    let handle: gnutls_ocsp_resp_t

    /// Parse the DER of an OCSPResponse (RFC 6960 §4.2.1).
    /// - Throws: `GnuTLSFailure` when GnuTLS rejects the encoding.
    package init(der: [UInt8]) throws {
        var handle: gnutls_ocsp_resp_t?
        try gnutlsCheck(gnutls_ocsp_resp_init(&handle), "gnutls_ocsp_resp_init")
        guard let handle else { throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_ocsp_resp_init") }
        self.handle = handle
        try withDatum(der) { datum in
            try gnutlsCheck(gnutls_ocsp_resp_import(handle, datum), "gnutls_ocsp_resp_import")
        }
    }

    deinit { gnutls_ocsp_resp_deinit(handle) }

    /// responseStatus (RFC 6960 §4.2.1): 0 successful, 1 malformedRequest, 2 internalError,
    /// 3 tryLater, 5 sigRequired, 6 unauthorized.
    var responseStatus: Int { Int(gnutls_ocsp_resp_get_status(handle)) }

    /// Whether the first SingleResponse's CertID names `certificate` (issuer hashes and serial).
    func isFor(_ certificate: GnuTLSCertificate) -> Bool {
        gnutls_ocsp_resp_check_crt(handle, 0, certificate.handle) == 0
    }

    /// The nonce extension's value, nil when the response has none.
    func nonce() -> [UInt8]? {
        var datum = gnutls_datum_t()
        guard gnutls_ocsp_resp_get_nonce(handle, nil, &datum) == 0 else { return nil }
        return takeDatum(&datum)
    }

    /// The first SingleResponse (RFC 6960 §4.2.1).
    struct Single {
        /// 0 good, 1 revoked, 2 unknown.
        var status: UInt32
        var thisUpdate: Date
        /// Nil when absent.
        var nextUpdate: Date?
        var revocationTime: Date?
        /// CRLReason (RFC 5280 §5.3.1), nil when absent.
        var revocationReason: Int?
    }

    /// - Throws: `GnuTLSFailure` when the response has no SingleResponse.
    func single() throws -> Single {
        var status: UInt32 = 0, reason: UInt32 = 0
        var thisUpdate: time_t = 0, nextUpdate: time_t = 0, revoked: time_t = 0
        try gnutlsCheck(
            gnutls_ocsp_resp_get_single(
                handle, 0, nil, nil, nil, nil, &status, &thisUpdate, &nextUpdate, &revoked, &reason),
            "gnutls_ocsp_resp_get_single")
        func date(_ t: time_t) -> Date? { t == -1 ? nil : Date(timeIntervalSince1970: TimeInterval(t)) }
        let isRevoked = status == GNUTLS_OCSP_CERT_REVOKED.rawValue
        // GNUTLS_X509_CRLREASON_UNSPECIFIED (0) also stands for "no reason given".
        return Single(
            status: status, thisUpdate: Date(timeIntervalSince1970: TimeInterval(thisUpdate)),
            nextUpdate: date(nextUpdate), revocationTime: isRevoked ? date(revoked) : nil,
            revocationReason: isRevoked ? Int(reason) : nil)
    }

    /// Check the signature with `gnutls_ocsp_resp_verify_direct`: signed by `issuer` itself,
    /// or by a responder certificate included in the response that `issuer` signed and that
    /// carries id-kp-OCSPSigning (RFC 6960 §4.2.2.2).
    /// - Returns: nil when it verifies, else the problems in words.
    package func signatureProblem(issuer: GnuTLSCertificate) -> String? {
        var verify: UInt32 = 0
        let code = gnutls_ocsp_resp_verify_direct(handle, issuer.handle, &verify, 0)
        guard code == 0 else {
            return
                "GnuTLS could not check the signature "
                + "(\(GnuTLSFailure(code: code, function: "gnutls_ocsp_resp_verify_direct").description))"
        }
        guard verify != 0 else { return nil }
        let names: [(gnutls_ocsp_verify_reason_t, String)] = [
            (GNUTLS_OCSP_VERIFY_SIGNER_NOT_FOUND, "the signer was not found"),
            (GNUTLS_OCSP_VERIFY_SIGNER_KEYUSAGE_ERROR, "the responder certificate lacks id-kp-OCSPSigning"),
            (
                GNUTLS_OCSP_VERIFY_UNTRUSTED_SIGNER,
                "the responder certificate is not issued by the certificate's issuer"
            ),
            (GNUTLS_OCSP_VERIFY_INSECURE_ALGORITHM, "an insecure signature algorithm"),
            (GNUTLS_OCSP_VERIFY_SIGNATURE_FAILURE, "the signature does not verify"),
            (GNUTLS_OCSP_VERIFY_CERT_NOT_ACTIVATED, "the responder certificate is not yet valid"),
            (GNUTLS_OCSP_VERIFY_CERT_EXPIRED, "the responder certificate has expired")
        ]
        return names.filter { verify & $0.0.rawValue != 0 }.map(\.1).joined(separator: ", ")
    }
}

extension GnuTLSCertificate {
    /// The OCSP URIs of the authorityInfoAccess extension (RFC 5280 §4.2.2.1), in order.
    func ocspURLs() -> [String] {
        authorityInfoAccessURLs(GNUTLS_IA_OCSP_URI)
    }
}
