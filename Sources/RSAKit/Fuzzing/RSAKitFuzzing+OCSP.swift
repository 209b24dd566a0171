// The OCSP response check (Revocation/OCSPCheck.swift), for Fuzz/Sources/FuzzOCSP (issue 26):
// a response is untrusted input from the network or from a TLS server's stapled status.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@_spi(Fuzzing)
extension RSAKitFuzzing {
    /// What ``ocspJudge(_:certificate:issuer:now:)`` concluded about one response.
    public struct OCSPVerdict: Sendable, Equatable {
        /// "good", "revoked", "unknown" or "not-checked" (``RSARevocationCheck/Status``'s raw value).
        public let status: String
        /// Where the status came from, or why none could be established.
        public let source: String
        /// For "revoked": when (never nil then).
        public let revocationDate: Date?
        /// For "revoked": the CRLReason code, when the response gives one.
        public let revocationReason: Int?
        /// True when GnuTLS parses `body` and its signature verifies for `issuer` (directly or
        /// by a delegated responder with id-kp-OCSPSigning); computed apart from the verdict.
        public let signatureVerifies: Bool
    }

    /// Judge `body` as the OCSP response (RFC 6960 §4.2.1) about `certificate`, issued by
    /// `issuer`, at `now`, exactly as trust evaluation does for a fetched or stapled response
    /// (no nonce expected, the default clock skew). Never throws.
    public static func ocspJudge(_ body: [UInt8], certificate: X509Certificate, issuer: X509Certificate, now: Date) -> OCSPVerdict {
        guard let leaf = try? GnuTLSCertificate(der: certificate.derRepresentation),
              let ca = try? GnuTLSCertificate(der: issuer.derRepresentation) else {
            return OCSPVerdict(status: "not-checked", source: "the fixed certificates do not parse", revocationDate: nil,
                               revocationReason: nil, signatureVerifies: false)
        }
        let answer = OCSPCheck.judge(body, origin: "fuzz input", certificate: leaf, issuer: ca, nonce: nil,
                                     policy: RSARevocationPolicy(method: .ocsp), now: now)
        let verifies = (try? GnuTLSOCSPResponse(der: body)).map { $0.signatureProblem(issuer: ca) == nil } ?? false
        return OCSPVerdict(status: answer.status.rawValue, source: answer.source, revocationDate: answer.revocationDate,
                           revocationReason: answer.revocationReason, signatureVerifies: verifies)
    }
}
