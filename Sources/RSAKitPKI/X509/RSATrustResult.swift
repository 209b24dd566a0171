// What a trust evaluation returns: Apple's SecTrustResultType names, and every reason
// with the certificate it concerns.
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The outcome of ``RSATrust/evaluate()``, named as Apple's `SecTrustResultType`.
public enum RSATrustResult: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// kSecTrustResultProceed: the chain is good and ends at (or contains) a certificate the
    /// user marked trusted.
    case proceed
    /// kSecTrustResultUnspecified: the chain is good and ends at a system or given anchor.
    case unspecified
    /// kSecTrustResultRecoverableTrustFailure: expired or not yet valid, unknown issuer or
    /// untrusted root, hostname or purpose mismatch; a different verify date, anchor,
    /// hostname or policy may make it pass.
    case recoverableTrustFailure = "recoverable-trust-failure"
    /// kSecTrustResultDeny: a certificate in the chain is marked distrusted by the user.
    case deny
    /// kSecTrustResultFatalTrustFailure: a bad signature, a CA without CA rights, an
    /// unknown critical extension, an insecure algorithm, a constraint violated, a
    /// certificate GnuTLS calls invalid.
    case fatalTrustFailure = "fatal-trust-failure"
    /// kSecTrustResultInvalid: nothing to evaluate.
    case invalid

    /// Whether the result means "trusted" (proceed or unspecified), as Apple's guide tests it.
    public var isTrusted: Bool { self == .proceed || self == .unspecified }

    /// The raw value ("recoverable-trust-failure").
    public var description: String { rawValue }
}

/// One reason an evaluation did not succeed, with the certificate it concerns.
public struct RSATrustFailure: Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public enum Kind: Sendable, Hashable {
        /// The verify date is after the certificate's notAfter.
        case expired(notAfter: Date)
        /// The verify date is before the certificate's notBefore.
        case notYetValid(notBefore: Date)
        /// The issuer (named by its RFC 4514 DN) is neither among the certificates nor an anchor.
        case unknownIssuer(issuer: String)
        /// A self-signed certificate that is not an anchor.
        case untrustedRoot
        /// A certificate whose subject equals its issuer but whose signature does not verify
        /// under its own key: not a self-signed root, but signed by another key of that name,
        /// which was not found (openssl: "invalid CA certificate").
        case selfSignatureInvalid
        /// The SSL policy's hostname matches no DNS/IP subjectAltName (nor the CN without SANs).
        case hostnameMismatch(hostname: String)
        /// The extendedKeyUsage does not allow the policy's purpose.
        case purposeMismatch(required: X509Certificate.ExtendedKeyUsage)
        /// The signature does not verify with the issuer's public key.
        case badSignature
        /// The certificate issued another but is not a CA (basicConstraints cA false or
        /// absent, or keyUsage without keyCertSign).
        case issuerNotCA
        /// A CA constraint is violated (path length, name constraints).
        case constraintsViolated
        /// A critical extension GnuTLS does not know.
        case unknownCriticalExtension
        /// A signature algorithm or key size GnuTLS deems insecure (MD5, SHA-1, short keys).
        case insecureAlgorithm
        /// GnuTLS calls the certificate invalid for another reason (its sentence).
        case invalidCertificate(detail: String)
        /// The user marked the certificate distrusted.
        case distrusted
        /// A current CRL signed by the certificate's issuer lists it (RFC 5280 §6.3), revoked
        /// on `date`.
        case revoked(date: Date)
        /// The revocation policy requires a positive answer (``RSARevocationPolicy/requirePositiveResponse``)
        /// and none was had: no current CRL, no OCSP URL or answer, a refused or "unknown"
        /// response; `reason` says which (kSecTrustResultRecoverableTrustFailure).
        case revocationUnchecked(reason: String)

        /// A stable short code for JSON and scripts ("expired", "bad-signature").
        public var code: String {
            switch self {
            case .expired: return "expired"
            case .notYetValid: return "not-yet-valid"
            case .unknownIssuer: return "unknown-issuer"
            case .untrustedRoot: return "untrusted-root"
            case .selfSignatureInvalid: return "self-signature-invalid"
            case .hostnameMismatch: return "hostname-mismatch"
            case .purposeMismatch: return "purpose-mismatch"
            case .badSignature: return "bad-signature"
            case .issuerNotCA: return "issuer-not-ca"
            case .constraintsViolated: return "constraints-violated"
            case .unknownCriticalExtension: return "unknown-critical-extension"
            case .insecureAlgorithm: return "insecure-algorithm"
            case .invalidCertificate: return "invalid-certificate"
            case .distrusted: return "distrusted"
            case .revoked: return "revoked"
            case .revocationUnchecked: return "revocation-unchecked"
            }
        }

        /// The result this reason alone gives.
        public var result: RSATrustResult {
            switch self {
            case .distrusted: return .deny
            case .badSignature, .issuerNotCA, .constraintsViolated, .unknownCriticalExtension, .insecureAlgorithm,
                .invalidCertificate,
                .revoked:
                return .fatalTrustFailure
            case .expired, .notYetValid, .unknownIssuer, .revocationUnchecked, .untrustedRoot, .selfSignatureInvalid,
                .hostnameMismatch, .purposeMismatch:
                return .recoverableTrustFailure
            }
        }
    }

    /// What is wrong.
    public let kind: Kind
    /// The certificate concerned.
    public let certificate: X509Certificate
    /// Its position in the evaluated chain (0 = the leaf; the anchor last).
    public let chainIndex: Int
    /// For an expired or not-yet-valid certificate: a verify date inside the validity of
    /// every certificate in the chain, at which the dates would pass (the guide's recovery
    /// by SecTrustSetVerifyDate); nil when the validity periods do not overlap.
    public let suggestedVerifyDate: Date?

    /// A sentence: "certificate 0 (server.rsakit.test): expired at 2021-01-01T00:00:00Z".
    public var description: String {
        "certificate \(chainIndex) (\(certificate.subjectSummary)): \(message)"
    }

    /// The reason alone, lower case.
    public var message: String {
        switch kind {
        case let .expired(notAfter):
            var text = "expired at \(notAfter.formatted(.iso8601)) (notAfter)"
            if let suggestedVerifyDate {
                text += "; a verify date of \(suggestedVerifyDate.formatted(.iso8601)) would evaluate it"
            }
            return text
        case let .notYetValid(notBefore):
            var text = "not valid before \(notBefore.formatted(.iso8601)) (notBefore)"
            if let suggestedVerifyDate {
                text += "; a verify date of \(suggestedVerifyDate.formatted(.iso8601)) would evaluate it"
            }
            return text
        case let .unknownIssuer(issuer): return "issuer \"\(issuer)\" not found among the certificates and anchors"
        case .untrustedRoot: return "self-signed root that is not an anchor"
        case .selfSignatureInvalid:
            return
                "subject and issuer are the same name, but its signature does not verify under its own key: it is "
                + "not a self-signed root, and the other key of that name that signed it was not found"
        case let .hostnameMismatch(hostname): return "not valid for the hostname \"\(hostname)\""
        case let .purposeMismatch(required): return "extended key usage does not allow \(required) (\(required.oid))"
        case .badSignature: return "signature does not verify with the issuer's key"
        case .issuerNotCA: return "issued a certificate but is not a CA (basicConstraints / keyUsage)"
        case .constraintsViolated: return "a CA constraint (path length or name constraints) is violated"
        case .unknownCriticalExtension: return "has a critical extension that is not understood"
        case .insecureAlgorithm: return "uses an insecure algorithm or key size"
        case let .invalidCertificate(detail): return "invalid: \(detail)"
        case .distrusted: return "marked distrusted by the user"
        case let .revoked(date):
            return "revoked on \(date.formatted(.iso8601)) (by a current CRL or OCSP response of its issuer)"
        case let .revocationUnchecked(reason): return "revocation status could not be established: \(reason)"
        }
    }
}

/// The full outcome of an evaluation (SecTrustEvaluateWithError plus SecTrustCopyResult).
public struct RSATrustEvaluation: Sendable, Hashable {
    /// The result.
    public let result: RSATrustResult
    /// Every reason, in chain order; empty for proceed and unspecified.
    public let failures: [RSATrustFailure]
    /// The chain evaluated: the leaf first, then the issuers found, the anchor last when
    /// one was found (SecTrustCopyCertificateChain).
    public let chain: [X509Certificate]
    /// The anchor the chain ends at, nil when none was found.
    public let anchor: X509Certificate?
    /// Whether a certificate of the chain is marked trusted by the user.
    public let isUserTrusted: Bool
    /// The date the validity periods were checked against.
    public let verifyDate: Date
    /// Problems with the inputs that are not trust failures (a system anchor file that
    /// could not be read; an ssl-server policy without a hostname, ``RSATrust/noHostnameWarning``;
    /// a CRL refused for its signature or dates).
    public let warnings: [String]
    /// What revocation checking found for each certificate that has an issuer in the chain
    /// (the anchor has none), in chain order; empty when revocation was not checked
    /// (``RSATrust/revocationPolicy``: off, or CRLs only and none given).
    public var revocation: [RSARevocationCheck] = []

    /// An evaluation's outcome, as ``RSATrust`` and the TLS client (for a chain it could not
    /// read) make it.
    package init(
        result: RSATrustResult, failures: [RSATrustFailure], chain: [X509Certificate],
        anchor: X509Certificate?, isUserTrusted: Bool, verifyDate: Date, warnings: [String],
        revocation: [RSARevocationCheck] = []
    ) {
        self.result = result
        self.failures = failures
        self.chain = chain
        self.anchor = anchor
        self.isUserTrusted = isUserTrusted
        self.verifyDate = verifyDate
        self.warnings = warnings
        self.revocation = revocation
    }
}

/// The revocation status of one certificate of an evaluated chain (RFC 5280 §6.3 CRLs,
/// RFC 6960 OCSP).
public struct RSARevocationCheck: Sendable, Hashable {
    /// What was found.
    public enum Status: String, Sendable, Hashable {
        /// A current CRL of its issuer does not list it, or its OCSP responder says good.
        case good
        /// A current CRL of its issuer lists it, or its OCSP responder says revoked: the
        /// evaluation fails with ``RSATrustFailure/Kind/revoked(date:)``.
        case revoked
        /// The OCSP responder does not know the certificate (RFC 6960 §2.2 "unknown").
        case unknown
        /// No usable answer: no current CRL of its issuer (none, or refused: see the
        /// warnings), or no OCSP answer that passed the checks (``RSARevocationCheck/source`` says why).
        case notChecked = "not-checked"
    }

    /// The certificate's position in ``RSATrustEvaluation/chain``.
    public let chainIndex: Int
    /// The status.
    public let status: Status
    /// The CRL used ("CRL of CN=..., number 0x02, thisUpdate ..."), or why none was.
    public let source: String
    /// The revocation date, for ``Status/revoked``.
    public let revocationDate: Date?
    /// The CRLReason code (RFC 5280 §5.3.1: 0 unspecified, 1 keyCompromise, 2 cACompromise,
    /// 3 affiliationChanged, 4 superseded, 5 cessationOfOperation, 6 certificateHold,
    /// 8 removeFromCRL, 9 privilegeWithdrawn, 10 aACompromise), from an OCSP answer; nil otherwise.
    public var revocationReason: Int? = nil

    /// The name of ``revocationReason`` ("keyCompromise"), nil when there is none.
    public var revocationReasonName: String? {
        guard let revocationReason else { return nil }
        let names = [
            0: "unspecified", 1: "keyCompromise", 2: "cACompromise", 3: "affiliationChanged", 4: "superseded",
            5: "cessationOfOperation", 6: "certificateHold", 8: "removeFromCRL", 9: "privilegeWithdrawn",
            10: "aACompromise"
        ]
        return names[revocationReason] ?? "reason \(revocationReason)"
    }
}

extension RSATrustEvaluation {
    /// Every failure's sentence (``RSATrustFailure/description``), then every warning, in
    /// that order: what a log or a command line prints.
    public var reasons: [String] { failures.map(\.description) + warnings }
}
