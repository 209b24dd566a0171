// Revocation of one evaluated path under an RSARevocationPolicy: CRLs (RFC 5280 §6.3) and
// OCSP (RFC 6960), certificate by certificate (the anchor has no issuer in the path and is
// not checked).
import RSAKitCore
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
        if policy.method == .crl && crls.isEmpty && !policy.requirePositiveResponse && !policy.fetchCRLs {
            return outcome
        }
        let parsed = policy.usesCRLs ? try crls.map { ($0, try GnuTLSCRL(der: $0.derRepresentation)) } : []
        for index in 0..<(full.count - 1) {
            var check: RSARevocationCheck?
            if policy.usesCRLs {
                check = crlCheck(index: index, full: full, native: native, parsed: parsed, warnings: &outcome.warnings)
                if check?.status == .notChecked && policy.fetchCRLs && !policy.networkAccessDisabled {
                    check =
                        fetchedCRLCheck(index: index, full: full, native: native, warnings: &outcome.warnings) ?? check
                }
            }
            if policy.usesOCSP && (check == nil || check?.status == .notChecked) {
                var answer = ocspAnswer(index: index, full: full, native: native)
                if answer.status == .notChecked, let check { answer.source += "; " + check.source }
                check = RSARevocationCheck(
                    chainIndex: index, status: answer.status, source: answer.source,
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
            let judged = OCSPCheck.judge(
                stapled, origin: "stapled OCSP response", certificate: certificate, issuer: issuer,
                nonce: nil, policy: policy, now: now)
            guard judged.status == .notChecked else { return judged }
            notes = "; " + judged.source
        }
        let key = RSAHashAlgorithm.sha256.hash(full[index + 1].derRepresentation + full[index].serialNumber)
        if let cached = cache?.cachedOCSPResponse(key: key, now: now) {
            let judged = OCSPCheck.judge(
                cached, origin: "cached OCSP response", certificate: certificate, issuer: issuer,
                nonce: nil, policy: policy, now: now)
            if judged.status == .good || judged.status == .revoked { return judged }
        }
        var fetched = OCSPCheck.check(certificate: certificate, issuer: issuer, policy: policy, now: now)
        if fetched.status == .good || fetched.status == .revoked, let der = fetched.responseDER,
            let next = fetched.nextUpdate
        {
            cache?.cacheOCSPResponse(der, key: key, nextUpdate: next)
        }
        if fetched.status == .notChecked { fetched.source += notes }
        return fetched
    }

    /// The CRL check against the CRLs fetched from the certificate's distribution points;
    /// nil when none could be fetched and read (each failure is a warning).
    private func fetchedCRLCheck(
        index: Int, full: [X509Certificate], native: [GnuTLSCertificate],
        warnings: inout [String]
    ) -> RSARevocationCheck? {
        for url in native[index].crlDistributionPointURLs() {
            do {
                let bytes = try HTTPClient.get(
                    url: url, timeout: policy.ocspTimeout, maximumResponseByteCount: policy.maximumFetchedCRLByteCount)
                let fetched = try X509CRL.crls(from: bytes).map { ($0, try GnuTLSCRL(der: $0.derRepresentation)) }
                var check = crlCheck(index: index, full: full, native: native, parsed: fetched, warnings: &warnings)
                guard check.status != .notChecked else { continue }
                check = RSARevocationCheck(
                    chainIndex: index, status: check.status, source: check.source + ", fetched from \(url)",
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

    /// Whether `crl` verifies under `issuer`'s key and `issuer` may sign CRLs (a CA whose
    /// keyUsage, when present, has cRLSign: RFC 5280 §6.3.3 (f)), names aside.
    private static func isSignedIgnoringNames(
        _ crl: X509CRL, _ native: GnuTLSCRL, by issuer: X509Certificate, _ issuerNative: GnuTLSCertificate
    ) -> Bool {
        guard issuer.basicConstraints?.isCertificateAuthority == true,
            issuer.keyUsage.map({ $0.contains(.cRLSign) }) != false,
            let tbs = CertificateDERChecks.tbsCertificate(crl.derRepresentation)
        else { return false }
        return (try? native.signatureVerifies(tbsCertList: tbs, key: issuerNative)) == true
    }

    /// One current CRL that covers the certificate: who signed it when not the issuer's key,
    /// and for which reasons (RFC 5280 §6.3.3 (d)).
    private struct UsableCRL {
        var crl: X509CRL
        var signer: X509Certificate?
        var reasons: X509ReasonFlags
    }

    /// The certificate's status from the current CRLs of its issuer that have no critical
    /// extension rsakit does not process and cover it (``CRLScope``), each signed by the
    /// issuer's key or by a certificate of the issuer's name that ``crlSigners`` finds and
    /// validates (RFC 5280 §6.3.3 (f)). Of the CRLs of one scope (issuer and
    /// issuingDistributionPoint) the newest is used; revoked when one lists the certificate,
    /// good when none does and together they cover every reason (§6.3.3 (j)), else not
    /// checked (a CRL covering some reasons only, with no other for the rest).
    private func crlCheck(
        index: Int, full: [X509Certificate], native: [GnuTLSCertificate],
        parsed: [(X509CRL, GnuTLSCRL)], warnings: inout [String]
    ) -> RSARevocationCheck {
        let issuer = native[index + 1], pathNative = native
        var usable: [UsableCRL] = [], deltas: [UsableCRL] = []
        let issuerName = issuer.subjectName()
        let certificate = full[index]
        let points: [CRLDistributionPoint]?
        do {
            points = try certificate.crlDistributionPoints()
        } catch {
            warnings.append(
                "cRLDistributionPoints of certificate \(index) not read (\(error)): its CRLs are used as covering it "
                    + "for every reason"
            )
            points = nil
        }
        for (crl, crlNative) in parsed {
            let native = crlNative
            // RFC 5280 §6.3.3 (b)(1): the CRL issuer is the certificate's issuer, by GnuTLS's
            // comparison or else by RFC 5280 §7.1's (X509Name), which GnuTLS's signature
            // check does not see: such a CRL must verify under the issuer's key itself.
            // Any other issuer's CRL may still be an indirect CRL that the certificate's
            // cRLDistributionPoints name (its cRLIssuer), which CRLScope decides.
            var byNameOnly = !native.namesIssuer(issuer)
            var direct = true
            let crlIssuer = try? native.rawIssuerDN()
            if byNameOnly {
                let crlName = crlIssuer.flatMap { try? X509Name(der: $0) }
                if let issuerName, let crlName, crlName.matches(issuerName) {
                    // the issuer, by RFC 5280 §7.1 only
                } else if crl.issuingDistributionPoint?.indirectCRL == true,
                    points?.contains(where: { $0.crlIssuer != nil }) == true
                {
                    direct = false
                    byNameOnly = false
                } else {
                    continue
                }
            }
            // RFC 5280 §5.2: a critical extension not processed makes the CRL unusable.
            let unprocessed = crl.unprocessedCriticalExtensions
            guard unprocessed.isEmpty else {
                warnings.append(
                    "CRL of \(crl.issuer) refused: it has a critical extension rsakit does not process: "
                        + "\(unprocessed.joined(separator: ", "))"
                )
                continue
            }
            let reasons: X509ReasonFlags
            switch CRLScope.of(
                crl, crlIssuer: crlIssuer, direct: direct, for: certificate, certificateIssuer: certificate.issuerDER,
                points: points)
            {
            case let .reasons(covered):
                reasons = covered
            case let .excluded(why):
                warnings.append(
                    "CRL of \(crl.issuer) not used for certificate \(index): \(why) (issuingDistributionPoint)")
                continue
            }
            var signer: X509Certificate?
            if byNameOnly {
                guard Self.isSignedIgnoringNames(crl, native, by: full[index + 1], issuer) else {
                    warnings.append(
                        "CRL of \(crl.issuer) refused: its signature does not verify with the key of certificate "
                            + "\(index + 1), or that certificate may not sign CRLs"
                    )
                    continue
                }
            } else if !direct,
                let pathSigner = Self.pathCRLSigner(of: native, full: full, native: pathNative, above: index)
            {
                // An indirect CRL signed by a certificate of the path itself (the anchor, say).
                signer = pathSigner
            } else if !direct || !native.isSigned(by: issuer) {
                switch crlSigners?.signer(of: native, excluding: full[index + 1].derRepresentation) {
                case let .signedBy(found)?:
                    signer = found
                case let .refused(reason)?:
                    warnings.append("CRL of \(crl.issuer) refused: \(reason)")
                    continue
                case nil:
                    warnings.append(
                        "CRL of \(crl.issuer) refused: its signature does not verify with the key of certificate "
                            + "\(index + 1)"
                    )
                    continue
                }
            }
            if crl.thisUpdate > verifyDate {
                warnings.append(
                    "CRL of \(crl.issuer) refused: not valid before \(crl.thisUpdate.formatted(.iso8601)) (thisUpdate)")
            } else if let next = crl.nextUpdate, next < verifyDate {
                warnings.append("CRL of \(crl.issuer) refused: stale since \(next.formatted(.iso8601)) (nextUpdate)")
            } else if crl.baseCRLNumber != nil {
                deltas.append(UsableCRL(crl: crl, signer: signer, reasons: reasons))
            } else {
                usable.append(UsableCRL(crl: crl, signer: signer, reasons: reasons))
            }
        }
        // The newest CRL of each scope, the newest scope first.
        var newestByScope: [ScopeKey: UsableCRL] = [:]
        for entry in usable {
            let key = ScopeKey(issuer: entry.crl.issuer, scope: entry.crl.issuingDistributionPoint)
            if let kept = newestByScope[key], !RSATrust.isOlder(kept.crl, entry.crl) { continue }
            newestByScope[key] = entry
        }
        let chosen = newestByScope.values.sorted { RSATrust.isOlder($1.crl, $0.crl) }
        guard !chosen.isEmpty else {
            return RSARevocationCheck(
                chainIndex: index, status: .notChecked, source: "no current CRL of \(certificate.issuer)",
                revocationDate: nil)
        }
        var covered: X509ReasonFlags = []
        var sources: [String] = []
        for entry in chosen {
            var source = Self.describe(entry)
            var listed = Self.revocationDate(of: certificate, in: entry.crl, issuerName: issuerName)
            // RFC 5280 §6.3.3 (i), (j), (l): the newest current delta CRL that updates this
            // complete CRL answers first; removeFromCRL releases a certificate it lists.
            if let delta = Self.newestDelta(for: entry.crl, among: deltas) {
                source += "; delta " + Self.describe(delta)
                if let date = Self.revocationDate(of: certificate, in: delta.crl, issuerName: issuerName) {
                    let contents = Self.serialNumberContents(certificate).map { X509CRL.minimalTwosComplement($0) }
                    let released = delta.crl.removedFromCRL.contains { X509CRL.minimalTwosComplement($0) == contents }
                    listed = released ? nil : date
                }
            }
            if let date = listed {
                return RSARevocationCheck(chainIndex: index, status: .revoked, source: source, revocationDate: date)
            }
            covered.formUnion(entry.reasons)
            sources.append(source)
        }
        guard covered == .all else {
            let missing = X509ReasonFlags.all.subtracting(covered)
            return RSARevocationCheck(
                chainIndex: index, status: .notChecked,
                source:
                    "no current CRL of \(certificate.issuer) covers \(missing.names) (onlySomeReasons); "
                    + "\(sources.joined(separator: "; ")) covers the rest",
                revocationDate: nil)
        }
        return RSARevocationCheck(
            chainIndex: index, status: .good, source: sources.joined(separator: "; "), revocationDate: nil)
    }

    /// When `crl` lists `certificate` (whose issuer is `issuerName`), nil when it does not.
    /// The serial's encoded (signed) value when it can be read, not its magnitude: a
    /// certificate with serial 255 (0x00FF) is not the one with -1 (0xFF) that a CRL lists.
    /// In an indirect CRL only the entries of the certificate's issuer count (RFC 5280
    /// §5.3.3: certificateIssuer, else the CRL issuer).
    private static func revocationDate(of certificate: X509Certificate, in crl: X509CRL, issuerName: X509Name?) -> Date?
    {
        guard let entryIssuers = crl.entryIssuers else {
            return serialNumberContents(certificate).map { crl.revocationDate(ofSerialNumberContents: $0) }
                ?? crl.revocationDate(ofSerialNumber: certificate.serialNumber)
        }
        let wanted =
            serialNumberContents(certificate).map { X509CRL.minimalTwosComplement($0) }
            ?? X509CRL.minimalTwosComplement([0] + certificate.serialNumber)
        let crlIssuerName = (try? GnuTLSCRL(der: crl.derRepresentation)).flatMap { try? $0.rawIssuerDN() }
        for (entry, entryIssuer) in zip(crl.revokedCertificates, entryIssuers) {
            guard X509CRL.minimalTwosComplement(entry.serialNumber) == wanted else { continue }
            guard let issuerName, let name = (entryIssuer ?? crlIssuerName).flatMap({ try? X509Name(der: $0) }) else {
                return entry.revocationDate  // an issuer that cannot be read: listed, to be safe
            }
            if name.matches(issuerName) { return entry.revocationDate }
        }
        return nil
    }

    /// The certificate of the path above `index` that signed `crl` under its own name and
    /// may sign CRLs (a CA whose keyUsage, when present, has cRLSign), nil when none did:
    /// the signer of an indirect CRL, already validated as part of the path.
    private static func pathCRLSigner(
        of crl: GnuTLSCRL, full: [X509Certificate], native: [GnuTLSCertificate], above index: Int
    ) -> X509Certificate? {
        for position in (index + 1)..<full.count where crl.isSigned(by: native[position]) {
            let certificate = full[position]
            if certificate.basicConstraints?.isCertificateAuthority == true,
                certificate.keyUsage.map({ $0.contains(.cRLSign) }) != false
            {
                return certificate
            }
        }
        return nil
    }

    /// The newest of `deltas` that updates `complete` (RFC 5280 §5.2.4): the same issuer and
    /// issuingDistributionPoint, a deltaCRLIndicator at most the complete CRL's cRLNumber, and
    /// a cRLNumber above it. Nil when none does (the complete CRL answers alone).
    private static func newestDelta(for complete: X509CRL, among deltas: [UsableCRL]) -> UsableCRL? {
        guard let number = complete.crlNumber else { return nil }
        return deltas.filter { delta in
            guard delta.crl.issuer == complete.issuer,
                delta.crl.issuingDistributionPoint == complete.issuingDistributionPoint,
                let base = delta.crl.baseCRLNumber, let deltaNumber = delta.crl.crlNumber
            else { return false }
            return !isGreater(base, than: number) && isGreater(deltaNumber, than: number)
        }.max { RSATrust.isOlder($0.crl, $1.crl) }
    }

    /// Whether the non-negative big-endian INTEGER content `a` is greater than `b`.
    private static func isGreater(_ a: [UInt8], than b: [UInt8]) -> Bool {
        let x = a.drop { $0 == 0 }, y = b.drop { $0 == 0 }
        return x.count != y.count ? x.count > y.count : y.lexicographicallyPrecedes(x)
    }

    /// The scope of a CRL: its issuer and issuingDistributionPoint.
    private struct ScopeKey: Hashable {
        var issuer: String
        var scope: IssuingDistributionPoint?
    }

    /// The CRL in words: issuer, number, thisUpdate, its signer when not the issuer's key and
    /// the reasons when not all.
    private static func describe(_ entry: UsableCRL) -> String {
        let number = entry.crl.crlNumber.map { ", number 0x" + $0.map(hexByte).joined() } ?? ""
        let signedBy =
            entry.signer.map { ", signed by the CRL signer \($0.subjectSummary) (serial \($0.serialNumberHex))" } ?? ""
        let reasons = entry.reasons == .all ? "" : ", for \(entry.reasons.names)"
        return
            "CRL of \(entry.crl.issuer)\(number), thisUpdate "
            + "\(entry.crl.thisUpdate.formatted(.iso8601))\(signedBy)\(reasons)"
    }
}
