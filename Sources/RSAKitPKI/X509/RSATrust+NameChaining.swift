// Links whose names chain only under RFC 5280 §7.1 (X509Name: case and insignificant spaces
// folded), which GnuTLS's own comparison (octets, else its RFC 4514 strings) does not see:
// GnuTLS then calls the issuer "not found", so RSAKit checks such a link itself.
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSATrust {
    /// The status of the link `certificate` (index `index` of the path) <- `issuer`:
    /// `gnutls_x509_crt_verify` when GnuTLS sees the names chain, else RSAKit's own check
    /// (``nameChainedLinkStatus(_:native:issuer:issuerNative:)``).
    /// - Returns: the status, and whether the link chains only under RFC 5280 §7.1.
    func linkStatus(
        _ certificate: X509Certificate, native: GnuTLSCertificate, issuer: X509Certificate,
        issuerNative: GnuTLSCertificate
    ) throws -> (status: GnuTLSVerifyStatus, byNameOnly: Bool) {
        // GnuTLS's comparison, or RFC 4514 strings that GnuTLS finds equal (its key
        // identifier check then decides): GnuTLS verifies the link.
        if GnuTLSTrustList.isIssuer(issuerNative, of: native) || certificate.issuer == issuer.subject {
            return (try GnuTLSTrustList.verifyLink(native, issuer: issuerNative), false)
        }
        return (
            try nameChainedLinkStatus(certificate, native: native, issuer: issuer, issuerNative: issuerNative), true
        )
    }

    /// A link GnuTLS does not chain by name, checked as `gnutls_x509_crt_verify` would: the
    /// names match under RFC 5280 §7.1 (else signer not found), the signature verifies under
    /// the issuer's key over the TBSCertificate (else signature failure), and the issuer is a
    /// CA (basicConstraints cA) whose keyUsage, when present, has keyCertSign (RFC 5280
    /// §6.1.4 (k), (n); else signer not a CA).
    private func nameChainedLinkStatus(
        _ certificate: X509Certificate, native: GnuTLSCertificate, issuer: X509Certificate,
        issuerNative: GnuTLSCertificate
    ) throws -> GnuTLSVerifyStatus {
        guard let issuerName = native.issuerName(), let subject = issuerNative.subjectName(),
            subject.matches(issuerName)
        else {
            return [.invalid, .signerNotFound]
        }
        var status: GnuTLSVerifyStatus = []
        guard let tbs = CertificateDERChecks.tbsCertificate(certificate.derRepresentation),
            try GnuTLSTrustList.signatureVerifies(native, tbsCertificate: tbs, key: issuerNative)
        else {
            return [.invalid, .signatureFailure]
        }
        if issuer.basicConstraints?.isCertificateAuthority != true
            || issuer.keyUsage.map({ !$0.contains(.keyCertSign) }) == true
        {
            status.formUnion([.invalid, .signerNotCA])
        }
        return status
    }

    /// GnuTLS's status of the path above a link at `highest` (the highest index whose link
    /// chains by name only): `native` from `highest + 1` up. Path length and name constraints
    /// across the link are RSAKit's own checks (PathConstraints), as for every path.
    func verifyAbove(highest: Int, chain: [X509Certificate], native: [GnuTLSCertificate], anchors: GnuTLSTrustList)
        throws -> GnuTLSVerifyStatus
    {
        try anchors.verify(Array(native[(highest + 1)...]))
    }
}
