// How trust evaluation checks revocation, in the terms of Apple's SecPolicyCreateRevocation
// flags (kSecRevocationOCSPMethod, kSecRevocationCRLMethod, ...RequirePositiveResponse,
// ...NetworkAccessDisabled).
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The revocation policy of an ``RSATrust`` (SecPolicyCreateRevocation).
public struct RSARevocationPolicy: Sendable, Hashable {
    /// Which sources are asked.
    public enum Method: String, Sendable, Hashable, CaseIterable {
        /// OCSP only (kSecRevocationOCSPMethod): one request per certificate of the path.
        case ocsp
        /// CRLs only (kSecRevocationCRLMethod): ``RSATrust/crls`` and the store's CRLs.
        case crl
        /// A current CRL first; OCSP for a certificate no CRL answers for
        /// (kSecRevocationUseAnyAvailableMethod).
        case any
        /// No revocation checking at all, CRLs given or not.
        case off
    }

    /// Which sources are asked. Default ``Method/crl``: the CRLs given, no network.
    public var method: Method = .crl
    /// kSecRevocationRequirePositiveResponse: a certificate whose status could not be
    /// established (no CRL, no OCSP URL, no answer, a refused response, "unknown") fails the
    /// evaluation with ``RSATrustFailure/Kind/revocationUnchecked(reason:)`` (recoverable).
    /// When false, such a certificate is reported as a warning only.
    public var requirePositiveResponse = false
    /// kSecRevocationNetworkAccessDisabled: no OCSP request is sent; OCSP cannot answer.
    public var networkAccessDisabled = false
    /// Fetch the CRL named by a certificate's cRLDistributionPoints (RFC 5280 §4.2.1.13; http
    /// and https URIs, ``ocspTimeout`` each, at most ``maximumFetchedCRLByteCount``) when the
    /// CRLs are consulted and none given is current for its issuer; the fetched CRL is checked
    /// as a given one is (signature by the issuer, dates). Off by default; never with
    /// ``networkAccessDisabled``.
    public var fetchCRLs = false
    /// Fetch a missing issuer from the caIssuers URL of a certificate's authorityInfoAccess
    /// (RFC 5280 §4.2.2.1; http and https, ``ocspTimeout`` each, at most
    /// ``maximumFetchedIssuerByteCount``; a DER or PEM certificate, or a certs-only PKCS#7)
    /// when no certificate given, stored or anchored issues it, up to four levels of the
    /// chain; a fetched certificate is a candidate like a
    /// given one, never an anchor. It lives here with the other network switches of an
    /// evaluation (Apple's SecTrustSetNetworkFetchAllowed covers both). Off by default; never
    /// with ``networkAccessDisabled``.
    public var fetchIssuers = false
    /// The largest caIssuers response read, in bytes (default 1 MiB).
    public var maximumFetchedIssuerByteCount = 1024 * 1024
    /// The largest CRL fetched from a distribution point, in bytes (default 4 MiB).
    public var maximumFetchedCRLByteCount = 4 * 1024 * 1024
    /// The OCSP responder to ask for every certificate, instead of the URL of its
    /// authorityInfoAccess extension (RFC 5280 §4.2.2.1). http or https.
    public var ocspURL: String?
    /// Seconds allowed for one OCSP exchange, connecting included (default 5).
    public var ocspTimeout: Double = 5
    /// The largest OCSP response read, in bytes (default 64 KiB); a longer one is abandoned.
    public var maximumOCSPResponseByteCount = 64 * 1024
    /// Clock skew tolerated on an OCSP response's thisUpdate and nextUpdate, seconds (default 300).
    public var ocspClockSkew: Double = 300

    /// The default policy: CRLs only (see ``method``).
    public init() {}

    /// A policy with `method` and the two Apple flags.
    public init(method: Method, requirePositiveResponse: Bool = false, networkAccessDisabled: Bool = false) {
        self.method = method
        self.requirePositiveResponse = requirePositiveResponse
        self.networkAccessDisabled = networkAccessDisabled
    }

    /// Whether CRLs are consulted.
    var usesCRLs: Bool { method == .crl || method == .any }
    /// Whether OCSP is consulted.
    package var usesOCSP: Bool { method == .ocsp || method == .any }
}
