// How a TLS client connection decides to trust its server, and what it negotiates: the
// seeds' server trust pinning (evaluate the server trust against an anchor the app
// imported itself) as RSATrust settings under the SSL server policy.
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A TLS protocol version RSAKit's client negotiates.
public enum RSATLSProtocolVersion: String, Sendable, Hashable, CaseIterable {
    /// TLS 1.2 (RFC 5246).
    case tls12 = "TLS1.2"
    /// TLS 1.3 (RFC 8446).
    case tls13 = "TLS1.3"
}

/// What a ``RSATLSClientConfiguration/serverTrustHandler`` decides about the server, in
/// the words of URLSession's server-trust challenge (`URLSession.AuthChallengeDisposition`).
public enum RSATLSServerTrustDecision: Sendable, Hashable {
    /// Go by the evaluation: trusted when its result is ``RSATrustResult/proceed`` or
    /// ``RSATrustResult/unspecified`` (`.performDefaultHandling`).
    case performDefaultHandling
    /// Trust the server whatever the evaluation says (`.useCredential` with the server's
    /// trust, after the app's own check: a pinned key, a user's "connect anyway").
    case trust
    /// Refuse the server even if the evaluation trusts it (`.cancelAuthenticationChallenge`).
    case cancel
}

/// Settings of an ``RSATLSConnection``: the server's name, its trust (anchors, the store's
/// trust settings, the verify date), the protocol version and the time limits.
public struct RSATLSClientConfiguration: Sendable {
    /// The name the server's certificate must match (SSL server policy: DNS or IP
    /// subjectAltName, or the CN without them) and, unless an IP literal, the SNI sent.
    public var serverName: String
    /// The only version to negotiate; nil negotiates TLS 1.3 or 1.2.
    public var protocolVersion: RSATLSProtocolVersion?
    /// Extra anchors (SecTrustSetAnchorCertificates): `--anchor` files, pinned CAs.
    public var anchorCertificates: [X509Certificate] = []
    /// Only ``anchorCertificates`` and user-trusted certificates are anchors, not the
    /// system's (SecTrustSetAnchorCertificatesOnly).
    public var anchorCertificatesOnly = false
    /// SHA-256 certificate fingerprints the user marked trusted (``RSATrust/userTrustedFingerprints``).
    public var userTrustedFingerprints: Set<[UInt8]> = []
    /// SHA-256 certificate fingerprints the user marked distrusted.
    public var userDistrustedFingerprints: Set<[UInt8]> = []
    /// The system anchor bundle (PEM) read unless ``anchorCertificatesOnly``.
    public var systemAnchorsFile = RSATrust.systemAnchorsPath
    /// Certificates that may help build the server's chain besides those it sends (the
    /// store's, from ``addTrustSettings(from:)``): intermediates a server forgets to send.
    public var intermediateCertificates: [X509Certificate] = []
    /// CRLs the server's chain is checked against (``RSATrust/crls``); empty: no revocation check.
    public var crls: [X509CRL] = []
    /// How the server's chain is checked for revocation (``RSATrust/revocationPolicy``):
    /// CRLs only by default.
    public var revocationPolicy = RSARevocationPolicy()
    /// Where OCSP responses are cached (``RSATrust/ocspResponseCache``); the store after
    /// ``addTrustSettings(from:)``.
    public var ocspResponseCache: (any RSAOCSPResponseCache)?
    /// The date certificates are checked against; nil means the time of the handshake.
    public var verifyDate: Date?
    /// Seconds allowed for connecting and, separately, for the handshake.
    public var timeout: Double = 30
    /// Called once per handshake, inside it, after the server's certificates were
    /// evaluated and before the client sends its certificate, signature or any data (as
    /// URLSession's server-trust challenge): it gets the trust object (``trust(for:)`` of
    /// the certificates the server sent) and its evaluation, and decides. Nil means
    /// ``RSATLSServerTrustDecision/performDefaultHandling``. It runs on the thread doing the
    /// handshake and must not block for long (the handshake's ``timeout`` runs meanwhile).
    public var serverTrustHandler: (@Sendable (RSATrust, RSATrustEvaluation) -> RSATLSServerTrustDecision)?
    /// The async form of ``serverTrustHandler`` (URLSession's async
    /// `urlSession(_:didReceive:) async -> (AuthChallengeDisposition, URLCredential?)`), for a
    /// decision that awaits: an actor holding pins, a store read with ``RSATrust/evaluateAsync()``.
    /// Called at the same point of the handshake with the same arguments, when
    /// ``serverTrustHandler`` is nil (that one wins when both are set). It runs as a task on
    /// the cooperative pool while the handshake's own thread waits for it, and must decide
    /// within ``timeout``: a handler that has not returned by then refuses the server
    /// (``RSATLSServerTrustDecision/cancel``). Used by ``RSATLSConnection``,
    /// ``RSAAsyncTLSConnection`` and ``RSAHTTPSClient`` alike. Called from the synchronous
    /// ``RSATLSConnection`` on a task's thread it would hold that pool thread while it waits:
    /// connect with ``RSAAsyncTLSConnection`` from async code.
    public var serverTrustHandlerAsync: (@Sendable (RSATrust, RSATrustEvaluation) async -> RSATLSServerTrustDecision)?
    /// Called inside the handshake when the server asks for a client certificate
    /// (CertificateRequest) and the connection was made without an identity (URLSession's
    /// client-certificate challenge): it returns the identity to send (for example
    /// `RSATLSClientIdentity(store:label:)`), or nil to send none. Never called when the
    /// server does not ask. See ``RSATLSClientCertificateRequest`` for when it runs in TLS
    /// 1.2 and 1.3; the identity is sent only to a trusted server either way. It runs on the
    /// thread doing the handshake and must not block for long (the handshake's ``timeout``
    /// runs meanwhile); what it throws ends the handshake and is thrown by the connect.
    public var clientIdentityHandler: (@Sendable (RSATLSClientCertificateRequest) throws -> RSATLSClientIdentity?)?
    /// The async form of ``clientIdentityHandler``, for a choice that awaits: an actor holding
    /// the identity, a store read, a user's answer. Called at the same point with the same
    /// argument, when ``clientIdentityHandler`` is nil (that one wins when both are set). It
    /// runs as a task on the cooperative pool while the handshake's own thread waits for it
    /// (as ``serverTrustHandlerAsync``), and must answer within ``timeout``: a handler that
    /// has not returned by then ends the handshake with `RSATLSError.timedOut`. What it
    /// throws ends the handshake and is thrown by the connect. Connect with
    /// ``RSAAsyncTLSConnection`` from async code (the synchronous ``RSATLSConnection`` on a
    /// task's thread would hold that pool thread while it waits).
    public var clientIdentityHandlerAsync:
        (@Sendable (RSATLSClientCertificateRequest) async throws -> RSATLSClientIdentity?)?
    /// Application protocols offered by ALPN (RFC 7301), most preferred first: ["h2",
    /// "http/1.1"]. Each name is 1 to 255 bytes (a longer or empty one fails the connect with
    /// `RSATLSError.handshakeFailed`). The server's choice is
    /// ``RSATLSConnection/negotiatedApplicationProtocol``; a server that selects a protocol
    /// not offered fails the handshake. Empty (the default): ALPN is not sent.
    public var applicationProtocols: [String] = []

    /// Settings for a server named `serverName`, with the system anchors, both versions
    /// and a 30-second timeout.
    public init(serverName: String) {
        self.serverName = serverName
    }

    /// Add the store's trust settings (`cert add --trust` / `--distrust`, like
    /// `security add-trusted-cert`): trusted certificates become anchors whose chains
    /// evaluate to ``RSATrustResult/proceed``; distrusted ones deny; every stored
    /// certificate becomes a candidate intermediate (``intermediateCertificates``), as
    /// ``RSATrust/addKeychain(_:)`` does; the store's CRLs join ``crls``.
    ///
    /// - Throws: the store's read errors (`RSAError.storeIOError`, `RSAError.damagedItem`).
    public mutating func addTrustSettings(from store: RSAKeyStore) throws {
        var trust = RSATrust(certificates: [], policy: .basicX509)
        try trust.addKeychain(store)
        anchorCertificates += trust.anchorCertificates
        userTrustedFingerprints.formUnion(trust.userTrustedFingerprints)
        userDistrustedFingerprints.formUnion(trust.userDistrustedFingerprints)
        intermediateCertificates += trust.certificates
        crls += trust.crls
        ocspResponseCache = store
    }

    /// The trust object for the server's certificates (leaf first, then
    /// ``intermediateCertificates``) under the SSL server policy with ``serverName``.
    public func trust(for certificates: [X509Certificate]) -> RSATrust {
        var trust = RSATrust(
            certificates: certificates + intermediateCertificates, policy: .sslServer(hostname: serverName))
        trust.anchorCertificates = anchorCertificates
        trust.anchorCertificatesOnly = anchorCertificatesOnly
        trust.userTrustedFingerprints = userTrustedFingerprints
        trust.userDistrustedFingerprints = userDistrustedFingerprints
        trust.systemAnchorsFile = systemAnchorsFile
        trust.crls = crls
        trust.revocationPolicy = revocationPolicy
        trust.ocspResponseCache = ocspResponseCache
        trust.verifyDate = verifyDate ?? Date()
        return trust
    }
}
