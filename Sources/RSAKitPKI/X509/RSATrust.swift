// Trust evaluation mirroring Apple's SecTrust: a trust object made from certificates and a
// policy (SecTrustCreateWithCertificates, SecPolicyCreateBasicX509, SecPolicyCreateSSL),
// anchors (SecTrustSetAnchorCertificates, SecTrustSetAnchorCertificatesOnly), a verify
// date (SecTrustSetVerifyDate) and user trust settings, evaluated (SecTrustEvaluate) into
// Apple's results. GnuTLS verifies signatures, CA rights and constraints with its time
// checks disabled; RSAKit checks every date against the chosen verify date, the policy's
// purpose and hostname, and the user's trust settings.
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a chain is evaluated for (SecPolicyRef).
public enum RSATrustPolicy: Sendable, Hashable {
    /// SecPolicyCreateBasicX509: chain, signatures, validity, basic constraints, CA key usage.
    case basicX509
    /// SecPolicyCreateSSL(true, hostname): basic, plus the serverAuth purpose and, when
    /// given, the hostname against the leaf's DNS/IP subjectAltNames (or CN without them).
    case sslServer(hostname: String?)
    /// SecPolicyCreateSSL(false, nil): basic, plus the clientAuth purpose.
    case sslClient

    /// The purpose the leaf's extendedKeyUsage must allow, if any.
    var requiredPurpose: X509Certificate.ExtendedKeyUsage? {
        switch self {
        case .basicX509: return nil
        case .sslServer: return .serverAuth
        case .sslClient: return .clientAuth
        }
    }
}

/// A trust object: certificates to evaluate, a policy, anchors, a verify date and the
/// user's trust settings. A value type; ``evaluate()`` may be called repeatedly after
/// changing any setting (the guide's "change the verify date and evaluate again").
public struct RSATrust: Sendable {
    /// The Debian/Ubuntu system CA bundle (package ca-certificates).
    public static let systemAnchorsPath = "/etc/ssl/certs/ca-certificates.crt"

    /// The leaf first, then any certificates that may help build the chain, in any order.
    public var certificates: [X509Certificate]
    /// The policy.
    public var policy: RSATrustPolicy
    /// Extra anchors (SecTrustSetAnchorCertificates); the store's trusted certificates belong here.
    public var anchorCertificates: [X509Certificate] = []
    /// Whether only ``anchorCertificates`` (and user-trusted certificates) are anchors,
    /// dropping the system's (SecTrustSetAnchorCertificatesOnly).
    public var anchorCertificatesOnly = false
    /// The date validity periods are checked against (SecTrustSetVerifyDate); now by default.
    public var verifyDate = Date()
    /// SHA-256 fingerprints (``X509Certificate/fingerprint``) of certificates the user
    /// marked trusted: they act as anchors, and a chain containing one gives ``RSATrustResult/proceed``.
    public var userTrustedFingerprints: Set<[UInt8]> = []
    /// SHA-256 fingerprints of certificates the user marked distrusted: a chain containing
    /// one gives ``RSATrustResult/deny``.
    public var userDistrustedFingerprints: Set<[UInt8]> = []
    /// The system anchor bundle read unless ``anchorCertificatesOnly`` (PEM).
    public var systemAnchorsFile = RSATrust.systemAnchorsPath
    /// Certificate revocation lists to check the chain against (RFC 5280 §6.3). Each
    /// certificate with an issuer in the chain is checked against the newest CRL of its
    /// issuer's name (compared under RFC 5280 §7.1) that is current at ``verifyDate``
    /// (thisUpdate not after it, nextUpdate not before it), signed by its issuer's key or by a
    /// certificate of that name among ``certificates`` that has cRLSign and validates to the
    /// same anchor, revocation included (§6.3.3 (f)), and whose issuingDistributionPoint, if
    /// any, does not leave the certificate out (§6.3.3 (b)(2), in part); a listed certificate
    /// fails with ``RSATrustFailure/Kind/revoked(date:)`` (fatal); a CRL with a bad signature,
    /// bad dates or a critical extension RSAKit does not process (§5.2) is refused with a
    /// warning. Empty (the default) under the default ``revocationPolicy`` (CRLs only):
    /// revocation is not checked.
    public var crls: [X509CRL] = []
    /// How revocation is checked (SecPolicyCreateRevocation): CRLs, OCSP, either, or not at
    /// all, whether a positive answer is required, whether the network may be used. The
    /// default checks ``crls`` only, without network access.
    public var revocationPolicy = RSARevocationPolicy()
    /// An OCSP response for the leaf obtained otherwise, e.g. stapled by a TLS server
    /// (status_request, RFC 6066 §8): DER OCSPResponse (RFC 6960 §4.2.1). When the policy uses
    /// OCSP it is checked as a fetched response is (signature, CertID, dates; it carries no
    /// nonce of ours) and, if it passes, answers for the leaf without a request; a refused
    /// one is reported and the responder is asked instead.
    public var stapledOCSPResponse: [UInt8]?
    /// Where OCSP responses are kept until their nextUpdate and looked up before a request
    /// (``RSAKeyStore`` after ``addKeychain(_:)``); nil: none. A cached response is checked
    /// again each time, as a stapled one is.
    public var ocspResponseCache: (any RSAOCSPResponseCache)?
    /// The DER of the CRL-signing certificates whose own paths are being validated by the
    /// evaluations this one is nested in (RFC 5280 §6.3.3 (f)): they are not searched again,
    /// so a signer whose status hangs on a CRL it signed itself ends the recursion.
    var crlSignersInValidation: Set<[UInt8]> = []

    /// A trust object for `certificates` (leaf first) under `policy` (SecTrustCreateWithCertificates).
    public init(certificates: [X509Certificate], policy: RSATrustPolicy) {
        self.certificates = certificates
        self.policy = policy
    }

    /// The warning of an ssl-server evaluation without a hostname: the chain and the
    /// serverAuth purpose were checked, the leaf's names were not, so the result is not what a
    /// TLS client connecting to some name would get (SecPolicyCreateSSL with a nil hostname).
    public static let noHostnameWarning =
        "the ssl-server policy was evaluated without a hostname: the leaf's names were not checked, as a TLS client "
        + "would check them"

    /// The longest chain built, in certificates.
    static let maximumChainLength = 16

    /// Evaluate (SecTrustEvaluate): build the chain from the leaf through the given
    /// certificates to an anchor, let GnuTLS verify it without time checks, check every
    /// certificate's dates (the anchor's too) against ``verifyDate``, the policy, and the
    /// user's trust settings. Never throws: problems are failures in the result.
    /// - Returns: the result, every failure with its certificate, the chain and anchor.
    public func evaluate() -> RSATrustEvaluation {
        guard let leaf = certificates.first else {
            return RSATrustEvaluation(
                result: .invalid, failures: [], chain: [], anchor: nil, isUserTrusted: false,
                verifyDate: verifyDate, warnings: ["no certificate to evaluate"])
        }
        do {
            return try evaluate(leaf: leaf)
        } catch {
            let failure = RSATrustFailure(
                kind: .invalidCertificate(detail: "\(error)"), certificate: leaf, chainIndex: 0,
                suggestedVerifyDate: nil)
            return RSATrustEvaluation(
                result: .fatalTrustFailure, failures: [failure], chain: [leaf], anchor: nil,
                isUserTrusted: false, verifyDate: verifyDate, warnings: [])
        }
    }

    private func evaluate(leaf: X509Certificate) throws -> RSATrustEvaluation {
        var warnings: [String] = []
        if case .sslServer(hostname: nil) = policy {
            warnings.append(Self.noHostnameWarning)
        }
        let anchors = try GnuTLSTrustList()
        if !anchorCertificatesOnly {
            do {
                try anchors.addAnchors(pemFile: systemAnchorsFile)
            } catch {
                warnings.append("the system anchors could not be read from \(systemAnchorsFile) (\(error))")
            }
        }
        for anchor in anchorCertificates {
            try anchors.addAnchor(der: anchor.derRepresentation)
        }
        for certificate in certificates where userTrustedFingerprints.contains(certificate.fingerprint) {
            try anchors.addAnchor(der: certificate.derRepresentation)
        }

        // Certificates given as anchors or marked trusted are anchors themselves, whatever
        // they are: a pinned leaf or intermediate ends the chain where it appears (Apple's
        // SecTrustSetAnchorCertificates accepts a leaf).
        let pinned = Set(
            anchorCertificates.map(\.derRepresentation)
                + certificates.filter { userTrustedFingerprints.contains($0.fingerprint) }.map(\.derRepresentation))

        // Every path from the leaf through the pool to an anchor (or to where the search
        // stops), in order of preference; the first that validates wins (cross-signed and
        // expired alternatives, as SecTrust tries them). When none does, the first path's
        // evaluation is the answer: it is the one a single greedy search would have built.
        var seen: Set<[UInt8]> = [leaf.derRepresentation]
        var pool: [CRLSignerSearch.Candidate] = []
        let fetched = fetchedIssuers(
            leaf: leaf, known: Array(certificates.dropFirst()), anchors: anchors, warnings: &warnings)
        for certificate in certificates.dropFirst() + fetched where seen.insert(certificate.derRepresentation).inserted
        {
            pool.append((certificate, try certificate.gnutlsCertificate()))
        }
        let paths = try candidatePaths(leaf: leaf, pool: pool, anchors: anchors, pinned: pinned)
        var first: RSATrustEvaluation?
        for path in paths {
            let evaluation = try evaluate(path: path, pool: pool, anchors: anchors, warnings: warnings)
            if evaluation.result.isTrusted { return evaluation }
            if first == nil { first = evaluation }
        }
        return first!
    }

    /// Whether CRL `a` is superseded by `b`: the lower cRLNumber (RFC 5280 §5.2.3) when both
    /// have one, else the earlier thisUpdate.
    package static func isOlder(_ a: X509CRL, _ b: X509CRL) -> Bool {
        if let x = a.crlNumber?.drop(while: { $0 == 0 }), let y = b.crlNumber?.drop(while: { $0 == 0 }), x != y {
            return x.count != y.count ? x.count < y.count : x.lexicographicallyPrecedes(y)
        }
        return a.thisUpdate < b.thisUpdate
    }

    /// One way from the leaf up: the certificates (leaf first), their GnuTLS handles, and the
    /// anchor that issues the top (nil when the search stopped without one).
    private struct CandidatePath {
        var chain: [X509Certificate]
        var native: [GnuTLSCertificate]
        var anchor: X509Certificate?
    }

    /// At most this many paths are built and evaluated.
    static let maximumCandidatePaths = 8

    /// The paths from `leaf`, depth first: at each certificate, the pinned end, then the
    /// anchor that issues it, then each issuer in ``certificates`` (those whose signature
    /// verifies first; `pool` is ``certificates`` after the leaf, without repeats, with their
    /// GnuTLS handles). Always at least one path.
    private func candidatePaths(
        leaf: X509Certificate, pool: [CRLSignerSearch.Candidate], anchors: GnuTLSTrustList,
        pinned: Set<[UInt8]>
    ) throws -> [CandidatePath] {
        let poolNames = pool.map { $0.native.subjectName() }
        var paths: [CandidatePath] = []
        func extend(_ path: CandidatePath, used: Set<Int>) throws {
            guard paths.count < RSATrust.maximumCandidatePaths, let top = path.native.last,
                let certificate = path.chain.last
            else { return }
            if pinned.contains(certificate.derRepresentation) {
                paths.append(CandidatePath(chain: path.chain, native: path.native, anchor: certificate))
                return
            }
            var anchored = false
            if let der = try anchors.anchorDER(issuing: top) {
                paths.append(
                    CandidatePath(
                        chain: path.chain, native: path.native, anchor: try X509Certificate(derRepresentation: der)))
                anchored = true
            }
            // A self-signed root ends the search; a certificate that only carries its
            // issuer's name as its own was signed by another key: look for that key.
            let selfSigned = try certificate.isSelfIssued && certificate.isSelfSigned(top)
            // Issuers by name: GnuTLS's comparison (octets, else its RFC 4514 strings, and the
            // key identifiers), else RFC 5280 §7.1's where the RFC 4514 strings differ
            // (case and insignificant spaces folded, X509Name).
            let issuerName = top.issuerName()
            var byNameOnly: Set<Int> = []
            var candidates =
                selfSigned || path.chain.count >= RSATrust.maximumChainLength
                ? []
                : pool.indices.filter { index in
                    guard !used.contains(index) else { return false }
                    if GnuTLSTrustList.isIssuer(pool[index].1, of: top) { return true }
                    guard pool[index].0.subject != certificate.issuer, let issuerName,
                        poolNames[index]?.matches(issuerName) == true
                    else { return false }
                    byNameOnly.insert(index)
                    return true
                }
            // Prefer the candidates whose signature verifies.
            let verifies = Set(
                candidates.filter { index in
                    if byNameOnly.contains(index) {
                        return CertificateDERChecks.tbsCertificate(certificate.derRepresentation).map {
                            (try? GnuTLSTrustList.signatureVerifies(top, tbsCertificate: $0, key: pool[index].1))
                                == true
                        } == true
                    }
                    return (try? GnuTLSTrustList.verifyLink(top, issuer: pool[index].1))?.contains(.signatureFailure)
                        == false
                })
            candidates.sort { verifies.contains($0) && !verifies.contains($1) }
            if candidates.isEmpty {
                if !anchored { paths.append(path) }
                return
            }
            for index in candidates {
                try extend(
                    CandidatePath(
                        chain: path.chain + [pool[index].0], native: path.native + [pool[index].1], anchor: nil),
                    used: used.union([index]))
            }
        }
        try extend(CandidatePath(chain: [leaf], native: [try leaf.gnutlsCertificate()], anchor: nil), used: [])
        return paths
    }

    /// Evaluate one path: signatures and CA rights link by link, the whole path through
    /// GnuTLS, dates against ``verifyDate``, the policy and the user's trust settings.
    private func evaluate(
        path: CandidatePath, pool: [CRLSignerSearch.Candidate], anchors: GnuTLSTrustList,
        warnings: [String]
    ) throws -> RSATrustEvaluation {
        let chain = path.chain
        let native = path.native
        let anchor = path.anchor
        var full = chain
        var fullNative = native
        if let anchor, anchor != chain.last {
            full.append(anchor)
            fullNative.append(try anchor.gnutlsCertificate())
        }

        var failures: [RSATrustFailure] = []
        func fail(_ kind: RSATrustFailure.Kind, _ index: Int, suggested: Date? = nil) {
            let failure = RSATrustFailure(
                kind: kind, certificate: full[index], chainIndex: index, suggestedVerifyDate: suggested)
            if !failures.contains(failure) { failures.append(failure) }
        }

        // Signatures and CA rights, link by link, so each reason names its certificate.
        var attributed: GnuTLSVerifyStatus = [.invalid, .signerNotFound, .expired, .notActivated]
        var highestByName: Int?
        for index in 0..<(full.count - 1) {
            let (status, byNameOnly) = try linkStatus(
                full[index], native: fullNative[index], issuer: full[index + 1],
                issuerNative: fullNative[index + 1])
            if byNameOnly && index + 1 < chain.count { highestByName = index }
            attributed.formUnion(status)
            if status.contains(.signatureFailure) { fail(.badSignature, index) }
            if status.contains(.signerNotCA) { fail(.issuerNotCA, index + 1) }
            if status.contains(.insecureAlgorithm) { fail(.insecureAlgorithm, index) }
            if status.contains(.unknownCriticalExtensions) { fail(.unknownCriticalExtension, index) }
            // GnuTLS's signer-constraints flag on a link: an issuer whose keyUsage lacks
            // keyCertSign (RFC 5280 §6.1.4 (n)), or a name constraint, which RSAKit judges on
            // the whole path below instead (PathConstraints). A non-CA issuer also breaks the
            // path-length count; report the cause only.
            if status.contains(.signerConstraintsFailure) && !status.contains(.signerNotCA)
                && full[index + 1].keyUsage.map({ !$0.contains(.keyCertSign) }) == true
            {
                fail(.constraintsViolated, index)
            }
            if status.contains(.invalid)
                && status.isDisjoint(with: [
                    .signatureFailure, .signerNotCA, .insecureAlgorithm,
                    .unknownCriticalExtensions, .signerConstraintsFailure
                ])
            {
                fail(.invalidCertificate(detail: status.gnutlsDescription.lowercased()), index)
            }
        }
        if anchor == nil {
            let top = chain.count - 1
            if !chain[top].isSelfIssued {
                fail(.unknownIssuer(issuer: chain[top].issuer), top)
            } else if !(try chain[top].isSelfSigned(native[top])) {
                fail(.selfSignatureInvalid, top)
            } else {
                fail(.untrustedRoot, top)
            }
        }
        // The whole chain at once: what only a path shows (path length, name constraints).
        let overall =
            try highestByName.map { try verifyAbove(highest: $0, chain: chain, native: native, anchors: anchors) }
            ?? anchors.verify(native)
        let rest = overall.subtracting(attributed)
        let issuerNotCAFound = failures.contains { $0.kind == .issuerNotCA }
        // Path length and name constraints are RSAKit's (PathConstraints), whatever GnuTLS's
        // signer-constraints flag says of the whole path.
        if !issuerNotCAFound, let index = Self.pathLengthViolation(full) ?? Self.nameConstraintsViolation(full) {
            fail(.constraintsViolated, index)
        }
        if rest.contains(.signerNotCA) && !issuerNotCAFound { fail(.issuerNotCA, min(1, full.count - 1)) }
        if rest.contains(.signatureFailure) { fail(.badSignature, 0) }
        if rest.contains(.insecureAlgorithm) { fail(.insecureAlgorithm, 0) }
        if rest.contains(.unknownCriticalExtensions) { fail(.unknownCriticalExtension, 0) }
        if !rest.subtracting([
            .signerConstraintsFailure, .signerNotCA, .signatureFailure, .insecureAlgorithm,
            .unknownCriticalExtensions, .purposeMismatch, .unexpectedOwner
        ]).isEmpty {
            fail(.invalidCertificate(detail: rest.gnutlsDescription.lowercased()), 0)
        }
        if overall.contains(.signerNotFound) && anchor != nil && failures.isEmpty {
            fail(.unknownIssuer(issuer: chain[chain.count - 1].issuer), chain.count - 1)
        }

        // Dates, against the verify date: every certificate, the anchor included.
        let windowStart = full.map(\.notValidBefore).max()!
        let windowEnd = full.map(\.notValidAfter).min()!
        for (index, certificate) in full.enumerated() {
            if verifyDate > certificate.notValidAfter {
                let suggested = windowStart <= windowEnd ? max(windowStart, windowEnd.addingTimeInterval(-86_400)) : nil
                fail(.expired(notAfter: certificate.notValidAfter), index, suggested: suggested)
            } else if verifyDate < certificate.notValidBefore {
                let suggested = windowStart <= windowEnd ? min(windowEnd, windowStart.addingTimeInterval(86_400)) : nil
                fail(.notYetValid(notBefore: certificate.notValidBefore), index, suggested: suggested)
            }
        }

        // The policy: purpose and hostname of the leaf.
        if let purpose = policy.requiredPurpose, !native[0].allowsKeyPurpose(purpose.oid) {
            fail(.purposeMismatch(required: purpose), 0)
        }
        if case let .sslServer(hostname?) = policy, !native[0].matchesHostname(hostname) {
            fail(.hostnameMismatch(hostname: hostname), 0)
        }

        // Revocation: CRLs and OCSP as the revocation policy says (Revocation/).
        var warnings = warnings
        let outcome = try RevocationChecker(
            policy: revocationPolicy, crls: crls, verifyDate: verifyDate, stapledOCSPResponse: stapledOCSPResponse,
            cache: ocspResponseCache,
            crlSigners: crlSignerSearch(
                pool: Self.withLeafInValidation(pool, full: full, native: fullNative, crlSignersInValidation),
                anchor: anchor)
        )
        .check(full: full, native: fullNative)
        let revocation = outcome.checks
        warnings += outcome.warnings
        for check in revocation {
            switch check.status {
            case .revoked:
                fail(.revoked(date: check.revocationDate ?? verifyDate), check.chainIndex)
            case .notChecked, .unknown:
                if revocationPolicy.requirePositiveResponse {
                    fail(.revocationUnchecked(reason: check.source), check.chainIndex)
                } else if revocationPolicy.method != .crl {
                    warnings.append(
                        "revocation of certificate \(check.chainIndex) (\(full[check.chainIndex].subjectSummary)) "
                            + "not established: \(check.source)"
                    )
                }
            case .good:
                break
            }
        }

        // The user's trust settings.
        for (index, certificate) in full.enumerated() where userDistrustedFingerprints.contains(certificate.fingerprint)
        {
            fail(.distrusted, index)
        }
        let isUserTrusted = full.contains { userTrustedFingerprints.contains($0.fingerprint) }

        failures.sort { $0.chainIndex < $1.chainIndex }
        let result: RSATrustResult
        if failures.contains(where: { $0.kind.result == .deny }) {
            result = .deny
        } else if failures.contains(where: { $0.kind.result == .fatalTrustFailure }) {
            result = .fatalTrustFailure
        } else if !failures.isEmpty {
            result = .recoverableTrustFailure
        } else {
            result = isUserTrusted ? .proceed : .unspecified
        }
        var evaluation = RSATrustEvaluation(
            result: result, failures: failures, chain: full, anchor: anchor,
            isUserTrusted: isUserTrusted, verifyDate: verifyDate, warnings: warnings)
        evaluation.revocation = revocation
        return evaluation
    }
}

extension X509Certificate {
    /// Whether the signature verifies under the certificate's own key (`native` is its
    /// GnuTLS handle); false when the DER cannot be split.
    func isSelfSigned(_ native: GnuTLSCertificate) throws -> Bool {
        guard let tbs = CertificateDERChecks.tbsCertificate(derRepresentation) else { return false }
        return try GnuTLSTrustList.isSelfSigned(native, tbsCertificate: tbs)
    }
}
