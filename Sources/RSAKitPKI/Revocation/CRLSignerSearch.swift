// A CRL signed by a key other than the one that signed the certificate it answers for
// (RFC 5280 §6.3.3 (f)): a CA with a separate CRL-signing certificate, or one that rolled
// its key over (a self-issued certificate) and signs CRLs with the new key only.
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Finds the certificate that signed a complete CRL among the evaluation's candidates (chain
/// files, store certificates) and has it validated to the evaluation's trust anchor, its own
/// revocation included, once per evaluated path.
internal final class CRLSignerSearch {
    /// A candidate: the certificate and its GnuTLS handle.
    typealias Candidate = (certificate: X509Certificate, native: GnuTLSCertificate)

    /// What the search found for one CRL.
    enum Outcome {
        /// This certificate signed it and validates (RFC 5280 §6.3.3 (f)).
        case signedBy(X509Certificate)
        /// Certificates that signed it were found, none validates: why, for the warning.
        case refused(String)
    }

    /// Certificates that may have signed a CRL.
    let candidates: [Candidate]
    /// Validates a candidate's own path to the evaluation's anchor, revocation included:
    /// nil when it validates, else why not (a sentence).
    let validate: (X509Certificate) -> String?
    /// The DER of the signers whose own validation is under way further out (this search
    /// serves it): such a signer is taken without validating it again, so a CRL signer's
    /// status may come from the CRL it signed itself (NIST PKITS 4.14.30), and no search
    /// recurses without end. Its outer validation still decides whether it is used at all.
    let inValidation: Set<[UInt8]>
    /// The answers of ``validate`` so far, by the candidate's DER.
    private var validated: [[UInt8]: String?] = [:]

    /// A search among `candidates`; `validate` is asked at most once per candidate.
    init(candidates: [Candidate], inValidation: Set<[UInt8]> = [], validate: @escaping (X509Certificate) -> String?) {
        self.candidates = candidates
        self.inValidation = inValidation
        self.validate = validate
    }

    /// The certificate that signed `crl`, other than `excluded` (the DER of the path's issuer,
    /// tried before), whose path validates: RFC 5280 §6.3.3 (f), the CRL issuer's certificate
    /// names the CRL's issuer, its key verifies the CRL's signature
    /// (``GnuTLSCRL/signatureVerifies(with:)``: it need not be a CA), its keyUsage has cRLSign,
    /// and its own path ends at the same trust anchor. Nil when no candidate signed it.
    func signer(of crl: GnuTLSCRL, excluding excluded: [UInt8]) -> Outcome? {
        var refusals: [String] = []
        for candidate in candidates
        where candidate.certificate.derRepresentation != excluded && crl.signatureVerifies(with: candidate.native) {
            // NOTE: RFC 5280 §6.3.3 (f) asks for cRLSign only when keyUsage is present; a
            // signer other than the certificate's issuer must show it here (every PKITS CRL
            // signer does), so a certificate without keyUsage never signs CRLs for another.
            guard candidate.certificate.keyUsage?.contains(.cRLSign) == true else {
                refusals.append(
                    "the certificate that signed it (\(candidate.certificate.subjectSummary), serial "
                        + "\(candidate.certificate.serialNumberHex)) has no cRLSign keyUsage"
                )
                continue
            }
            let der = candidate.certificate.derRepresentation
            let problem: String?
            if inValidation.contains(der) {
                problem = nil
            } else if let known = validated[der] {
                problem = known
            } else {
                problem = validate(candidate.certificate)
                validated[der] = problem
            }
            guard let problem else { return .signedBy(candidate.certificate) }
            refusals.append(
                "the certificate that signed it (\(candidate.certificate.subjectSummary), serial "
                    + "\(candidate.certificate.serialNumberHex)) does not validate: \(problem)"
            )
        }
        return refusals.isEmpty ? nil : .refused(refusals.joined(separator: "; "))
    }
}

extension RSATrust {
    /// The deepest nesting of CRL-signer validations: a signer's path may need a signer of
    /// its own (its issuer's CRL signed by another key), but not without end.
    static let maximumCRLSignerNesting = 4

    /// The CRL-signer search of a path that ends at `anchor` (nil: the path has no anchor, so
    /// no CRL signer can chain to it, and the search is not made). Candidates are `pool` (the
    /// chain and store certificates); the signers already being validated further out are
    /// taken as they are (``CRLSignerSearch/inValidation``).
    func crlSignerSearch(pool: [CRLSignerSearch.Candidate], anchor: X509Certificate?) -> CRLSignerSearch? {
        guard let anchor, crlSignersInValidation.count < Self.maximumCRLSignerNesting else { return nil }
        return CRLSignerSearch(candidates: pool, inValidation: crlSignersInValidation) { signer in
            self.crlSignerProblem(signer, anchor: anchor, pool: pool.map(\.certificate))
        }
    }

    /// `pool` with the path's leaf first when the leaf is a CRL signer whose validation is
    /// under way (the pool holds the certificates after the leaf only): it may have signed
    /// the CRL that answers for itself (NIST PKITS 4.14.30).
    static func withLeafInValidation(
        _ pool: [CRLSignerSearch.Candidate], full: [X509Certificate], native: [GnuTLSCertificate],
        _ inValidation: Set<[UInt8]>
    ) -> [CRLSignerSearch.Candidate] {
        guard let leaf = full.first, let leafNative = native.first, inValidation.contains(leaf.derRepresentation) else {
            return pool
        }
        return [(leaf, leafNative)] + pool
    }

    /// Validate a CRL signer's own path (RFC 5280 §6.3.3 (f)): the basic X.509 policy, the
    /// same trust anchor only, the same verify date, CRLs, revocation policy and distrusted
    /// certificates, so a revoked CRL signer is refused (NIST PKITS 4.4.20, 4.4.21).
    /// - Returns: nil when it validates, else its failures in words.
    private func crlSignerProblem(_ signer: X509Certificate, anchor: X509Certificate, pool: [X509Certificate])
        -> String?
    {
        var nested = RSATrust(certificates: [signer] + pool.filter { $0 != signer }, policy: .basicX509)
        nested.anchorCertificates = [anchor]
        nested.anchorCertificatesOnly = true
        nested.verifyDate = verifyDate
        nested.userDistrustedFingerprints = userDistrustedFingerprints
        nested.crls = crls
        nested.revocationPolicy = revocationPolicy
        nested.ocspResponseCache = ocspResponseCache
        nested.crlSignersInValidation = crlSignersInValidation.union([signer.derRepresentation])
        let evaluation = nested.evaluate()
        guard !evaluation.result.isTrusted else { return nil }
        let failures = evaluation.failures.map(\.description).joined(separator: "; ")
        return "\(evaluation.result)" + (failures.isEmpty ? "" : " (\(failures))")
    }
}
