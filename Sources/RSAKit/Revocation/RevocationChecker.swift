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
    /// Where a CRL signed by another key than the certificate's issuer's finds its signer
    /// (RFC 5280 §6.3.3 (f)); nil: only CRLs the issuer's key signed are used.
    var crlSigners: CRLSignerSearch? = nil

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
        if policy.method == .crl && crls.isEmpty && !policy.requirePositiveResponse && !policy.fetchCRLs { return outcome }
        let parsed = policy.usesCRLs ? try crls.map { ($0, try GnuTLSCRL(der: $0.derRepresentation)) } : []
        for index in 0..<(full.count - 1) {
            var check: RSARevocationCheck?
            if policy.usesCRLs {
                check = crlCheck(index: index, full: full, issuer: native[index + 1], parsed: parsed, warnings: &outcome.warnings)
                if check?.status == .notChecked && policy.fetchCRLs && !policy.networkAccessDisabled {
                    check = fetchedCRLCheck(index: index, full: full, native: native, warnings: &outcome.warnings) ?? check
                }
            }
            if policy.usesOCSP && (check == nil || check?.status == .notChecked) {
                var answer = ocspAnswer(index: index, full: full, native: native)
                if answer.status == .notChecked, let check { answer.source += "; " + check.source }
                check = RSARevocationCheck(chainIndex: index, status: answer.status, source: answer.source,
                                           revocationDate: answer.revocationDate, revocationReason: answer.revocationReason)
            }
            if let check { outcome.checks.append(check) }
        }
        return outcome
    }

    /// The OCSP answer for certificate `index`: the stapled response (the leaf only), else a
    /// cached one that still passes every check with a good or revoked status, else the
    /// responder's (cached when it is good or revoked and has a nextUpdate). A refused staple
    /// is noted in the source of a fetch that fails too.
    private func ocspAnswer(index: Int, full: [X509Certificate], native: [GnuTLSCertificate]) -> OCSPCheck.Answer {
        let certificate = native[index], issuer = native[index + 1], now = Date()
        var notes = ""
        if index == 0, let stapled = stapledOCSPResponse {
            let judged = OCSPCheck.judge(stapled, origin: "stapled OCSP response", certificate: certificate, issuer: issuer,
                                         nonce: nil, policy: policy, now: now)
            guard judged.status == .notChecked else { return judged }
            notes = "; " + judged.source
        }
        let key = RSAHashAlgorithm.sha256.hash(full[index + 1].derRepresentation + full[index].serialNumber)
        if let cached = cache?.cachedOCSPResponse(key: key, now: now) {
            let judged = OCSPCheck.judge(cached, origin: "cached OCSP response", certificate: certificate, issuer: issuer,
                                         nonce: nil, policy: policy, now: now)
            if judged.status == .good || judged.status == .revoked { return judged }
        }
        var fetched = OCSPCheck.check(certificate: certificate, issuer: issuer, policy: policy, now: now)
        if fetched.status == .good || fetched.status == .revoked, let der = fetched.responseDER, let next = fetched.nextUpdate {
            cache?.cacheOCSPResponse(der, key: key, nextUpdate: next)
        }
        if fetched.status == .notChecked { fetched.source += notes }
        return fetched
    }

    /// The CRL check against the CRLs fetched from the certificate's distribution points;
    /// nil when none could be fetched and read (each failure is a warning).
    private func fetchedCRLCheck(index: Int, full: [X509Certificate], native: [GnuTLSCertificate],
                                 warnings: inout [String]) -> RSARevocationCheck? {
        for url in native[index].crlDistributionPointURLs() {
            do {
                let bytes = try HTTPClient.get(url: url, timeout: policy.ocspTimeout, maximumResponseByteCount: policy.maximumFetchedCRLByteCount)
                let fetched = try X509CRL.crls(from: bytes).map { ($0, try GnuTLSCRL(der: $0.derRepresentation)) }
                var check = crlCheck(index: index, full: full, issuer: native[index + 1], parsed: fetched, warnings: &warnings)
                guard check.status != .notChecked else { continue }
                check = RSARevocationCheck(chainIndex: index, status: check.status, source: check.source + ", fetched from \(url)",
                                           revocationDate: check.revocationDate)
                return check
            } catch {
                warnings.append("CRL distribution point \(url) of certificate \(index) not used: \(error)")
            }
        }
        return nil
    }

    /// The content octets of the certificate's serialNumber INTEGER (after tag and length);
    /// nil when the TBSCertificate cannot be read that way.
    static func serialNumberContents(_ certificate: X509Certificate) -> [UInt8]? {
        guard let der = certificate.serialNumberDER, der.count >= 3 else { return nil }
        var offset = 2
        if der[1] & 0x80 != 0 {
            let lengthOctets = Int(der[1] & 0x7F)
            guard lengthOctets >= 1, lengthOctets <= 2, der.count > 2 + lengthOctets else { return nil }
            offset += lengthOctets
        }
        return Array(der[offset...])
    }

    /// Whether the certificate has a cRLDistributionPoints extension (RFC 5280 §4.2.1.13).
    private static func hasDistributionPoints(_ certificate: X509Certificate) -> Bool {
        (try? certificate.gnutlsCertificate().extensions())?.contains { $0.oid == "2.5.29.31" } == true
    }

    /// Whether `crl` verifies under `issuer`'s key and `issuer` may sign CRLs (a CA whose
    /// keyUsage, when present, has cRLSign: RFC 5280 §6.3.3 (f)), names aside.
    private static func isSignedIgnoringNames(_ crl: X509CRL, _ native: GnuTLSCRL, by issuer: X509Certificate, _ issuerNative: GnuTLSCertificate) -> Bool {
        guard issuer.basicConstraints?.isCertificateAuthority == true, issuer.keyUsage.map({ $0.contains(.cRLSign) }) != false,
              let tbs = CertificateDERChecks.tbsCertificate(crl.derRepresentation) else { return false }
        return (try? native.signatureVerifies(tbsCertList: tbs, key: issuerNative)) == true
    }

    /// The newest current CRL of the certificate's issuer without a critical extension that
    /// rsakit does not process: signed by the issuer's key, or by
    /// a certificate of the issuer's name that ``crlSigners`` finds and validates (RFC 5280
    /// §6.3.3 (f)).
    private func crlCheck(index: Int, full: [X509Certificate], issuer: GnuTLSCertificate,
                          parsed: [(X509CRL, GnuTLSCRL)], warnings: inout [String]) -> RSARevocationCheck {
        var current: [(crl: X509CRL, signer: X509Certificate?)] = []
        let issuerName = issuer.subjectName()
        for (crl, native) in parsed {
            // RFC 5280 §6.3.3 (b)(1): the CRL issuer is the certificate's issuer, by GnuTLS's
            // comparison or else by RFC 5280 §7.1's (X509Name), which GnuTLS's signature
            // check does not see: such a CRL must verify under the issuer's key itself.
            let byNameOnly = !native.namesIssuer(issuer)
            if byNameOnly {
                guard let issuerName, let crlName = (try? native.rawIssuerDN()).flatMap({ try? X509Name(der: $0) }),
                      crlName.matches(issuerName) else { continue }
            }
            // RFC 5280 §5.2: a critical extension not processed makes the CRL unusable.
            let unprocessed = crl.unprocessedCriticalExtensions
            guard unprocessed.isEmpty else {
                warnings.append("CRL of \(crl.issuer) refused: it has a critical extension rsakit does not process: \(unprocessed.joined(separator: ", "))")
                continue
            }
            if let scope = crl.issuingDistributionPoint,
               let why = scope.exclusion(of: full[index], hasDistributionPoints: Self.hasDistributionPoints(full[index])) {
                warnings.append("CRL of \(crl.issuer) not used for certificate \(index): \(why) (issuingDistributionPoint)")
                continue
            }
            var signer: X509Certificate?
            if byNameOnly {
                guard Self.isSignedIgnoringNames(crl, native, by: full[index + 1], issuer) else {
                    warnings.append("CRL of \(crl.issuer) refused: its signature does not verify with the key of certificate \(index + 1), or that certificate may not sign CRLs")
                    continue
                }
            } else if !native.isSigned(by: issuer) {
                switch crlSigners?.signer(of: native, excluding: full[index + 1].derRepresentation) {
                case let .signedBy(certificate)?:
                    signer = certificate
                case let .refused(reason)?:
                    warnings.append("CRL of \(crl.issuer) refused: \(reason)")
                    continue
                case nil:
                    warnings.append("CRL of \(crl.issuer) refused: its signature does not verify with the key of certificate \(index + 1)")
                    continue
                }
            }
            if crl.thisUpdate > verifyDate {
                warnings.append("CRL of \(crl.issuer) refused: not valid before \(crl.thisUpdate.formatted(.iso8601)) (thisUpdate)")
            } else if let next = crl.nextUpdate, next < verifyDate {
                warnings.append("CRL of \(crl.issuer) refused: stale since \(next.formatted(.iso8601)) (nextUpdate)")
            } else {
                current.append((crl, signer))
            }
        }
        guard let newest = current.max(by: { RSATrust.isOlder($0.crl, $1.crl) }) else {
            return RSARevocationCheck(chainIndex: index, status: .notChecked, source: "no current CRL of \(full[index].issuer)", revocationDate: nil)
        }
        let number = newest.crl.crlNumber.map { ", number 0x" + $0.map(hexByte).joined() } ?? ""
        let signedBy = newest.signer.map { ", signed by the CRL signer \($0.subjectSummary) (serial \($0.serialNumberHex))" } ?? ""
        let source = "CRL of \(newest.crl.issuer)\(number), thisUpdate \(newest.crl.thisUpdate.formatted(.iso8601))\(signedBy)"
        // The serial's encoded (signed) value when it can be read, not its magnitude: a
        // certificate with serial 255 (0x00FF) is not the one with -1 (0xFF) that a CRL lists.
        let listed = Self.serialNumberContents(full[index]).map { newest.crl.revocationDate(ofSerialNumberContents: $0) }
            ?? newest.crl.revocationDate(ofSerialNumber: full[index].serialNumber)
        if let date = listed {
            return RSARevocationCheck(chainIndex: index, status: .revoked, source: source, revocationDate: date)
        }
        return RSARevocationCheck(chainIndex: index, status: .good, source: source, revocationDate: nil)
    }
}
