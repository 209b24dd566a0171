// One OCSP exchange (RFC 6960) for one certificate of an evaluated path: the request with a
// nonce, HTTP through libcurl (HTTPClient), and every check on the answer before its status
// is believed: responseStatus, signature and delegation, CertID, nonce, thisUpdate/nextUpdate.
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

package enum OCSPCheck {
    /// The outcome for one certificate.
    package struct Answer {
        package var status: RSARevocationCheck.Status
        /// "OCSP response from URL, thisUpdate ...", or why the status could not be established.
        package var source: String
        package var revocationDate: Date?
        package var revocationReason: Int?
        /// The response that gave a status (for the cache), and its nextUpdate.
        var responseDER: [UInt8]? = nil
        var nextUpdate: Date? = nil
    }

    /// RFC 6960 §4.2.1 responseStatus names.
    private static func responseStatusName(_ status: Int) -> String {
        switch status {
        case 1: return "malformedRequest"
        case 2: return "internalError"
        case 3: return "tryLater"
        case 5: return "sigRequired"
        case 6: return "unauthorized"
        default: return "status \(status)"
        }
    }

    /// Ask the responder about `certificate` (issued by `issuer`). Never throws: every
    /// problem is an answer with ``RSARevocationCheck/Status/notChecked``.
    /// - Parameter now: the time freshness is judged at (thisUpdate, nextUpdate).
    static func check(certificate: GnuTLSCertificate, issuer: GnuTLSCertificate, policy: RSARevocationPolicy, now: Date)
        -> Answer
    {
        func notChecked(_ why: String) -> Answer { Answer(status: .notChecked, source: why) }
        guard !policy.networkAccessDisabled else {
            return notChecked("OCSP not asked: network access is disabled")
        }
        guard let url = policy.ocspURL ?? certificate.ocspURLs().first else {
            return notChecked("OCSP not asked: the certificate names no OCSP responder (authorityInfoAccess)")
        }
        let request: GnuTLSOCSPRequest
        do {
            request = try GnuTLSOCSPRequest(certificate: certificate, issuer: issuer)
        } catch {
            return notChecked("OCSP request for \(url) not made: \(error)")
        }
        let body: [UInt8]
        do {
            body = try HTTPClient.post(
                url: url, body: request.der, contentType: "application/ocsp-request",
                accept: "application/ocsp-response", timeout: policy.ocspTimeout,
                maximumResponseByteCount: policy.maximumOCSPResponseByteCount)
        } catch {
            return notChecked("OCSP responder \(url) did not answer: \(error)")
        }
        return judge(
            body, origin: "OCSP response from \(url)", certificate: certificate, issuer: issuer,
            nonce: request.nonce, policy: policy, now: now)
    }

    /// Check an OCSP response (fetched, or stapled by a TLS server) about `certificate`:
    /// responseStatus, signature and delegation, CertID, the nonce (when `nonce` is given and
    /// the response carries one), thisUpdate and nextUpdate against `now` with the policy's skew.
    /// - Parameter origin: how the source names it ("OCSP response from URL", "stapled OCSP response").
    package static func judge(
        _ body: [UInt8], origin: String, certificate: GnuTLSCertificate, issuer: GnuTLSCertificate,
        nonce expectedNonce: [UInt8]?, policy: RSARevocationPolicy, now: Date
    ) -> Answer {
        func notChecked(_ why: String) -> Answer { Answer(status: .notChecked, source: why) }
        let refused = origin + " refused: "
        guard let response = try? GnuTLSOCSPResponse(der: body) else {
            return notChecked(refused + "not an OCSP response GnuTLS can read (\(body.count) bytes)")
        }
        guard response.responseStatus == 0 else {
            return notChecked(
                refused + "responseStatus \(responseStatusName(response.responseStatus)) (RFC 6960 §4.2.1)")
        }
        if let problem = response.signatureProblem(issuer: issuer) {
            return notChecked(refused + problem)
        }
        guard response.isFor(certificate) else {
            return notChecked(refused + "it is about another certificate (CertID)")
        }
        if let expectedNonce, let nonce = response.nonce(), nonce != expectedNonce {
            return notChecked(refused + "its nonce is not the request's")
        }
        guard let single = try? response.single() else {
            return notChecked(refused + "it has no SingleResponse")
        }
        if single.thisUpdate > now.addingTimeInterval(policy.ocspClockSkew) {
            return notChecked(refused + "not valid before \(single.thisUpdate.formatted(.iso8601)) (thisUpdate)")
        }
        if let next = single.nextUpdate, next < now.addingTimeInterval(-policy.ocspClockSkew) {
            return notChecked(refused + "stale since \(next.formatted(.iso8601)) (nextUpdate)")
        }
        let source = "\(origin), thisUpdate \(single.thisUpdate.formatted(.iso8601))"
        var answer: Answer
        switch single.status {
        case 0:
            answer = Answer(status: .good, source: source)
        case 1:
            answer = Answer(
                status: .revoked, source: source, revocationDate: single.revocationTime ?? single.thisUpdate,
                revocationReason: single.revocationReason)
        default:
            answer = Answer(
                status: .unknown, source: source + ": the responder does not know the certificate (unknown)")
        }
        answer.responseDER = body
        answer.nextUpdate = single.nextUpdate
        return answer
    }
}
