// Revocation of one evaluated path under an RSARevocationPolicy: CRLs (RFC 5280 §6.3) and
// OCSP (RFC 6960), certificate by certificate (the anchor has no issuer in the path and is
// not checked).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

internal struct RevocationChecker {
    let policy: RSARevocationPolicy
    let crls: [X509CRL]
    let verifyDate: Date
    /// A DER OCSP response for the leaf (stapled); nil for none.
    var stapledOCSPResponse: [UInt8]? = nil
    /// Responses kept between evaluations; nil for none.
    var cache: (any RSAOCSPResponseCache)? = nil

    /// What the path's revocation checks found.
    struct Outcome {
        var checks: [RSARevocationCheck] = []
        var warnings: [String] = []
    }

    /// Check `full` (leaf first, the anchor last when there is one; `native` their GnuTLS handles).
    func check(full: [X509Certificate], native: [GnuTLSCertificate]) throws -> Outcome {
        var outcome = Outcome()
        guard policy.method != .off, full.count > 1 else { return outcome }
        // CRLs only, none given, nothing required: revocation is not checked (as before policies).
        if policy.method == .crl && crls.isEmpty && !policy.requirePositiveResponse { return outcome }
        let parsed = policy.usesCRLs ? try crls.map { ($0, try GnuTLSCRL(der: $0.derRepresentation)) } : []
        for index in 0..<(full.count - 1) {
            var check: RSARevocationCheck?
            if policy.usesCRLs {
                check = crlCheck(index: index, full: full, issuer: native[index + 1], parsed: parsed, warnings: &outcome.warnings)
            }
            if policy.usesOCSP && (check == nil || check?.status == .notChecked) {
                var stapledAnswer: OCSPCheck.Answer?
                var stapleNote = ""
                if index == 0, let stapled = stapledOCSPResponse {
                    let judged = OCSPCheck.judge(stapled, origin: "stapled OCSP response", certificate: native[0], issuer: native[1],
                                                 nonce: nil, policy: policy, now: Date())
                    if judged.status == .notChecked { stapleNote = "; " + judged.source } else { stapledAnswer = judged }
                }
                // Then a cached response (checked again), then the responder; a good or revoked
                // answer with a nextUpdate is cached.
                let cacheKey = RSAHashAlgorithm.sha256.hash(full[index + 1].derRepresentation + full[index].serialNumber)
                if stapledAnswer == nil, let cached = cache?.cachedOCSPResponse(key: cacheKey, now: Date()) {
                    let judged = OCSPCheck.judge(cached, origin: "cached OCSP response", certificate: native[index], issuer: native[index + 1],
                                                 nonce: nil, policy: policy, now: Date())
                    if judged.status == .good || judged.status == .revoked { stapledAnswer = judged }
                }
                var fetched = stapledAnswer ?? OCSPCheck.check(certificate: native[index], issuer: native[index + 1], policy: policy, now: Date())
                if stapledAnswer == nil, fetched.status == .good || fetched.status == .revoked,
                   let der = fetched.responseDER, let next = fetched.nextUpdate {
                    cache?.cacheOCSPResponse(der, key: cacheKey, nextUpdate: next)
                }
                if fetched.status == .notChecked { fetched.source += stapleNote }
                let answer = fetched
                let crlNote = check.map { "; " + $0.source } ?? ""
                check = RSARevocationCheck(chainIndex: index, status: answer.status, source: answer.source + (answer.status == .notChecked ? crlNote : ""),
                                           revocationDate: answer.revocationDate, revocationReason: answer.revocationReason)
            }
            if let check { outcome.checks.append(check) }
        }
        return outcome
    }

    /// The newest current CRL of the certificate's issuer that the issuer signed.
    private func crlCheck(index: Int, full: [X509Certificate], issuer: GnuTLSCertificate,
                          parsed: [(X509CRL, GnuTLSCRL)], warnings: inout [String]) -> RSARevocationCheck {
        var current: [X509CRL] = []
        for (crl, native) in parsed where native.namesIssuer(issuer) {
            if !native.isSigned(by: issuer) {
                warnings.append("CRL of \(crl.issuer) refused: its signature does not verify with the key of certificate \(index + 1)")
            } else if crl.thisUpdate > verifyDate {
                warnings.append("CRL of \(crl.issuer) refused: not valid before \(crl.thisUpdate.formatted(.iso8601)) (thisUpdate)")
            } else if let next = crl.nextUpdate, next < verifyDate {
                warnings.append("CRL of \(crl.issuer) refused: stale since \(next.formatted(.iso8601)) (nextUpdate)")
            } else {
                current.append(crl)
            }
        }
        guard let newest = current.max(by: RSATrust.isOlder) else {
            return RSARevocationCheck(chainIndex: index, status: .notChecked, source: "no current CRL of \(full[index].issuer)", revocationDate: nil)
        }
        let number = newest.crlNumber.map { ", number 0x" + $0.map(hexByte).joined() } ?? ""
        let source = "CRL of \(newest.issuer)\(number), thisUpdate \(newest.thisUpdate.formatted(.iso8601))"
        if let date = newest.revocationDate(ofSerialNumber: full[index].serialNumber) {
            return RSARevocationCheck(chainIndex: index, status: .revoked, source: source, revocationDate: date)
        }
        return RSARevocationCheck(chainIndex: index, status: .good, source: source, revocationDate: nil)
    }
}
