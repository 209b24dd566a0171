// A TLS client connection (RFC 8446, RFC 5246) whose client authentication uses an
// identity from RSAKit's store and whose server trust is RSATrust under the SSL server
// policy: the seeds' HTTPS mutual authentication (answering the client-certificate
// challenge with NSURLCredential credentialWithIdentity:, pinning the server trust to an
// anchor of their own) on Linux, with GnuTLS doing the protocol.
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// One rsakit private-key operation made during a handshake: the TLS signature scheme
/// and its input length (for tests and `-v`: proof that the signature came from rsakit).
public struct RSATLSPrivateKeyOperation: Sendable, Hashable, CustomStringConvertible {
    /// "rsa_pss_rsae_sha256", or "rsa_pkcs1 (DigestInfo, 51 bytes)" for PKCS#1 v1.5.
    public let scheme: String
    /// The signature's length in bytes (k).
    public let signatureByteCount: Int
    /// The scheme.
    public var description: String { scheme }
}

/// A TLS client connection over a TCP socket, after a completed handshake.
///
/// The handshake happens in the initialiser: the server's certificates are evaluated with
/// ``RSATrust`` (SSL server policy, ``RSATLSClientConfiguration/serverName``) inside the
/// handshake, and an untrusted server ends it before the client sends its certificate, its
/// signature or any byte of application data. The client's signature (CertificateVerify)
/// is made by RSAKit: RSASSA-PKCS1-v1_5 over the DigestInfo GnuTLS built, or RSASSA-PSS
/// (RSAE, SHA-256/384/512, salt = hash length) over the hash; GnuTLS never sees the key.
///
/// Not thread-safe: use a connection from one thread at a time.
public final class RSATLSConnection {
    /// The settings it was made with.
    public let configuration: RSATLSClientConfiguration
    /// The identity offered to the server, if any: the one given to the initialiser, else the
    /// one ``RSATLSClientConfiguration/clientIdentityHandler`` (or its async form) chose
    /// when the server asked.
    public let identity: RSATLSClientIdentity?
    /// The negotiated protocol ("TLS1.3", "TLS1.2").
    public let protocolVersion: String
    /// The negotiated cipher suite's IANA name ("TLS_AES_256_GCM_SHA384").
    public let cipherSuite: String
    /// GnuTLS's description of the session ("(TLS1.3)-(ECDHE-X25519)-(RSA-PSS-RSAE-SHA256)-(AES-256-GCM)").
    public let sessionDescription: String
    /// The server's certificates as sent, leaf first.
    public let serverCertificates: [X509Certificate]
    /// The evaluation of the server's chain. Its result is trusted unless
    /// ``RSATLSClientConfiguration/serverTrustHandler`` decided to trust the server anyway
    /// (``serverTrustDecision``).
    public let trustEvaluation: RSATrustEvaluation
    /// What the trust handler decided (``RSATLSServerTrustDecision/performDefaultHandling``
    /// without one).
    public let serverTrustDecision: RSATLSServerTrustDecision
    /// Whether the server asked for a client certificate (CertificateRequest).
    public let clientCertificateRequested: Bool
    /// Whether the client sent its certificate.
    public let clientCertificateSent: Bool
    /// The scheme of the client's CertificateVerify as GnuTLS names it ("RSA-PSS-RSAE-SHA256"), if one was sent.
    public let clientSignatureAlgorithm: String?
    /// The application protocol the server selected from
    /// ``RSATLSClientConfiguration/applicationProtocols`` by ALPN (RFC 7301: "h2",
    /// "http/1.1"); nil when none was offered or the server selected none.
    public let negotiatedApplicationProtocol: String?
    /// Every private-key operation RSAKit's engine made for this connection, in order.
    public var privateKeyOperations: [RSATLSPrivateKeyOperation] { state.operations }

    /// `host:port` as a URL authority writes it (RFC 3986 §3.2.2): an IPv6 literal in
    /// brackets ("[::1]:8443"), anything else as given ("127.0.0.1:8443", "example.com:443").
    public static func endpointText(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private let session: GnuTLSClientSession
    private let state: HandshakeState
    private let fileDescriptor: Int32
    private let ownsFileDescriptor: Bool
    private var fileDescriptorClosed = false
    private var hasRead = false
    private var isClosed = false
    private var peerClosed = false

    /// What the handshake's callbacks record (a class: the callbacks hold it, not the connection).
    final class HandshakeState {
        var evaluation: RSATrustEvaluation?
        var decision = RSATLSServerTrustDecision.performDefaultHandling
        var serverCertificates: [X509Certificate] = []
        var parseFailure: String?
        var operations: [RSATLSPrivateKeyOperation] = []
        /// Token sessions logged in for this handshake, logged out when it ends.
        var tokenSigners: [TokenSigner] = []
        /// The identity a client identity handler chose inside the handshake.
        var providedIdentity: RSATLSClientIdentity?
        /// The session, for the OCSP response the server stapled (read in the verify callback).
        weak var session: GnuTLSClientSession?
    }

    /// Connect to `host`:`port` over TCP and complete the handshake, within
    /// ``RSATLSClientConfiguration/timeout`` for each step. The connection owns the socket.
    ///
    /// - Throws: as ``init(fileDescriptor:configuration:identity:)``, and
    ///   `RSATLSError.connectFailed`, `RSATLSError.timedOut` for the TCP connection.
    public static func connect(
        host: String, port: Int, configuration: RSATLSClientConfiguration,
        identity: RSATLSClientIdentity?
    ) throws -> RSATLSConnection {
        let fd = try RSATLSSocket.connect(host: host, port: port, timeout: configuration.timeout)
        do {
            return try RSATLSConnection(
                fileDescriptor: fd, configuration: configuration, identity: identity, ownsFileDescriptor: true)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Run the client handshake on a connected, blocking TCP socket that stays the
    /// caller's (close it after ``close()``).
    ///
    /// - Parameters:
    ///   - fileDescriptor: the socket.
    ///   - configuration: server name, trust, version, timeout.
    ///   - identity: the client identity, or nil to offer none (or the one
    ///     ``RSATLSClientConfiguration/clientIdentityHandler`` or its async form chooses,
    ///     asked only if the server requests a certificate).
    /// - Throws: `RSATLSError.serverNotTrusted` (nothing was sent after the server's
    ///   certificates); `RSATLSError.clientCertificateRejected` (TLS 1.2: during the
    ///   handshake; TLS 1.3: see ``read(maximumByteCount:timeout:)``);
    ///   `RSATLSError.handshakeFailed`; `RSATLSError.timedOut`; `RSATLSError.connectionFailed`
    ///   for socket errors. For an identity whose key is on a token
    ///   (``RSATLSClientKey/token(_:pin:)``), before the handshake: `RSAError.tokenPINIncorrect`,
    ///   `RSAError.tokenUnavailable` (module, token or key object missing),
    ///   `RSAError.tokenOperationFailed`; the same when the token fails while signing.
    ///   What a client identity handler throws, as itself; `RSATLSError.timedOut` when
    ///   ``RSATLSClientConfiguration/clientIdentityHandlerAsync`` did not answer within the timeout.
    public convenience init(
        fileDescriptor: Int32, configuration: RSATLSClientConfiguration, identity: RSATLSClientIdentity?
    ) throws {
        try self.init(
            fileDescriptor: fileDescriptor, configuration: configuration, identity: identity, ownsFileDescriptor: false)
    }

    init(
        fileDescriptor: Int32, configuration: RSATLSClientConfiguration, identity: RSATLSClientIdentity?,
        ownsFileDescriptor: Bool
    ) throws {
        if let bad = configuration.applicationProtocols.first(where: { !(1...255).contains($0.utf8.count) }) {
            throw RSATLSError.handshakeFailed(
                reason: "cannot offer the ALPN protocol \"\(bad)\": a name is 1 to 255 bytes (RFC 7301 §3.1)")
        }
        let state = HandshakeState()
        // A token key: logged in now, before the handshake (a wrong PIN or a missing token
        // is thrown as itself); logged out when the handshake ends, either way. A key chosen
        // by a handler inside the handshake is logged in there, and out here too.
        defer { state.tokenSigners.forEach { $0.close() } }
        let externalKey = try identity.map { try RSATLSConnection.externalKey(for: $0, state: state) }
        let versions: GnuTLSVersions
        switch configuration.protocolVersion {
        case nil: versions = .tls12AndTLS13
        case .tls12?: versions = .tls12Only
        case .tls13?: versions = .tls13Only
        }
        let chain = identity.map { [$0.certificate.derRepresentation] + $0.chain.map(\.derRepresentation) } ?? []
        let session: GnuTLSClientSession
        do {
            session = try GnuTLSClientSession(
                fileDescriptor: fileDescriptor, serverName: configuration.serverName, versions: versions,
                clientChain: chain, clientKey: externalKey,
                certificateProvider: identity == nil
                    ? RSATLSConnection.certificateProvider(configuration: configuration, state: state) : nil,
                applicationProtocols: configuration.applicationProtocols,
                verifier: { [state] ders in RSATLSConnection.verify(ders, configuration: configuration, state: state) })
        } catch let failure as GnuTLSFailure {
            throw RSATLSError.handshakeFailed(reason: "cannot set up the TLS session: \(failure)")
        }
        state.session = session
        if configuration.revocationPolicy.usesOCSP {
            do { try session.requestOCSPStatus() } catch let failure as GnuTLSFailure {
                throw RSATLSError.handshakeFailed(reason: "cannot ask for a stapled OCSP response: \(failure)")
            }
        }
        do {
            try session.handshake(timeoutMilliseconds: UInt32(max(1, min(configuration.timeout * 1000, 4_000_000_000))))
        } catch let error as GnuTLSSessionError {
            throw RSATLSConnection.handshakeError(
                error, session: session, state: state, configuration: configuration,
                identity: identity ?? state.providedIdentity)
        }
        guard let evaluation = state.evaluation,
            state.decision == .trust || (state.decision == .performDefaultHandling && evaluation.result.isTrusted)
        else {
            // The verify callback always runs for a server certificate; a handshake without
            // one (anonymous, PSK) is not allowed by the priorities, but never trust it.
            session.bye()
            throw RSATLSError.serverNotTrusted(
                evaluation: RSATLSConnection.unreadable("the server sent no certificate"),
                serverCertificates: [], refusedByHandler: false)
        }
        self.configuration = configuration
        self.identity = identity ?? state.providedIdentity
        self.session = session
        self.state = state
        self.fileDescriptor = fileDescriptor
        self.ownsFileDescriptor = ownsFileDescriptor
        trustEvaluation = evaluation
        serverTrustDecision = state.decision
        serverCertificates = state.serverCertificates
        protocolVersion = session.protocolName
        cipherSuite = session.cipherSuiteName
        sessionDescription = session.sessionDescription
        clientCertificateRequested = session.clientCertificateRequested
        clientCertificateSent = session.clientCertificateSent
        clientSignatureAlgorithm = session.clientSignatureAlgorithmName
        negotiatedApplicationProtocol = session.selectedApplicationProtocol
    }

    deinit {
        if ownsFileDescriptor && !fileDescriptorClosed { Glibc.close(fileDescriptor) }
    }

    /// An evaluation that could not be made: no certificate to evaluate, `reason` as its warning.
    private static func unreadable(_ reason: String) -> RSATrustEvaluation {
        RSATrustEvaluation(
            result: .invalid, failures: [], chain: [], anchor: nil, isUserTrusted: false,
            verifyDate: Date(), warnings: [reason])
    }

    /// The verify callback: parse the server's chain and evaluate it (SSL server policy).
    private static func verify(_ ders: [[UInt8]], configuration: RSATLSClientConfiguration, state: HandshakeState)
        -> GnuTLSPeerVerdict
    {
        do {
            state.serverCertificates = try ders.map { try X509Certificate(derRepresentation: $0) }
        } catch {
            state.parseFailure = "the server's certificate cannot be read: \(error)"
            return .reject(.badCertificate)
        }
        var trust = configuration.trust(for: state.serverCertificates)
        trust.stapledOCSPResponse = state.session?.stapledOCSPResponse
        let evaluation = trust.evaluate()
        state.evaluation = evaluation
        if let handler = configuration.serverTrustHandler {
            state.decision = handler(trust, evaluation)
        } else if let handler = configuration.serverTrustHandlerAsync {
            state.decision = RSATLSHandlerBridge.wait(seconds: configuration.timeout, orElse: .cancel) { [trust] in
                await handler(trust, evaluation)
            }
        } else {
            state.decision = .performDefaultHandling
        }
        switch state.decision {
        case .trust: return .accept
        case .cancel: if evaluation.result.isTrusted { return .reject(.badCertificate) }
        case .performDefaultHandling: if evaluation.result.isTrusted { return .accept }
        }
        let kinds = evaluation.failures.map(\.kind)
        if kinds.contains(where: {
            if case .expired = $0 { return true }; return false
        }) {
            return .reject(.certificateExpired)
        }
        if kinds.contains(where: {
            switch $0 {
            case .unknownIssuer, .untrustedRoot, .selfSignatureInvalid: return true;
            default: return false
            }
        }) {
            return .reject(.unknownCA)
        }
        return .reject(.badCertificate)
    }

    /// Alerts that, after a CertificateRequest, mean the client's authentication was refused
    /// (RFC 8446 §6.2): handshake_failure, bad/unsupported/revoked/expired/unknown
    /// certificate, unknown_ca, access_denied, decrypt_error, certificate_required.
    static let clientAuthenticationAlerts: Set<Int> = [40, 42, 43, 44, 45, 46, 48, 49, 51, 116]

    private static func handshakeError(
        _ error: GnuTLSSessionError, session: GnuTLSClientSession, state: HandshakeState,
        configuration: RSATLSClientConfiguration, identity: RSATLSClientIdentity?
    ) -> any Error {
        switch error {
        case .peerRejected:
            guard state.parseFailure == nil, let evaluation = state.evaluation else {
                return RSATLSError.serverNotTrusted(
                    evaluation: unreadable(state.parseFailure ?? "the server's certificates were not evaluated"),
                    serverCertificates: [], refusedByHandler: false)
            }
            return RSATLSError.serverNotTrusted(
                evaluation: evaluation, serverCertificates: state.serverCertificates,
                refusedByHandler: state.decision == .cancel)
        case let .alertReceived(code, name):
            if session.clientCertificateRequested && clientAuthenticationAlerts.contains(code) {
                return RSATLSError.clientCertificateRejected(alert: name, certificateSent: identity != nil)
            }
            return RSATLSError.handshakeFailed(reason: "the server sent the fatal alert \"\(name)\"")
        case .timedOut:
            return RSATLSError.timedOut(
                operation: "the TLS handshake with \(configuration.serverName)", seconds: configuration.timeout)
        case .closedByPeer:
            return RSATLSError.handshakeFailed(reason: "the server closed the connection during the handshake")
        case .notTLS:
            return RSATLSError.handshakeFailed(
                reason: "the peer did not answer in TLS (is this a plain-text port, such as plain HTTP?)")
        case let .transport(reason):
            return RSATLSError.connectionFailed(reason: reason.lowercased())
        case let .clientCertificateUnavailable(underlying):
            // The client identity handler's own error (or its time-out), as itself.
            return underlying
        case let .signingFailed(underlying):
            // A token that failed mid-handshake (removed, logged out) is reported as itself.
            if let tokenError = underlying as? RSAError {
                switch tokenError {
                case .tokenUnavailable, .tokenPINIncorrect, .tokenOperationFailed: return tokenError
                default: break
                }
            }
            return RSATLSError.handshakeFailed(
                reason: "the client key could not sign: \(underlying.map { "\($0)" } ?? "unknown error")")
        case let .failed(reason):
            return RSATLSError.handshakeFailed(reason: reason)
        }
    }

    // MARK: Application data

    /// Send `bytes` as application data.
    ///
    /// - Throws: `RSATLSError.connectionFailed` (the connection is closed or failed).
    public func write(_ bytes: [UInt8]) throws {
        guard !isClosed else { throw RSATLSError.connectionFailed(reason: "the connection is closed") }
        do {
            try session.send(bytes)
        } catch let error as GnuTLSSessionError {
            throw readOrWriteError(error)
        }
    }

    /// Receive application data: at most `maximumByteCount` bytes, as soon as some arrive.
    ///
    /// - Parameter timeout: seconds to wait for data (nil: no limit).
    /// - Returns: the bytes, or nil once the server closed the connection (close_notify),
    ///   and nil again on every later call.
    /// - Throws: `RSATLSError.clientCertificateRejected` when the first read of a TLS 1.3
    ///   connection meets the alert a server sends after refusing the client certificate;
    ///   `RSATLSError.connectionFailed` for other alerts, resets, a close without
    ///   close_notify; `RSATLSError.timedOut`.
    public func read(maximumByteCount: Int = 16_384, timeout: Double? = nil) throws -> [UInt8]? {
        guard !isClosed && !peerClosed else { return nil }
        let deadline = timeout.map { RSATLSSocket.monotonicSeconds() + $0 }
        while true {
            if session.pendingByteCount == 0 {
                let remaining = deadline.map { max(0, $0 - RSATLSSocket.monotonicSeconds()) }
                guard try RSATLSSocket.waitFor(fileDescriptor, events: Int16(POLLIN), timeout: remaining) else {
                    throw RSATLSError.timedOut(
                        operation: "waiting for data from \(configuration.serverName)", seconds: timeout ?? 0)
                }
            }
            switch try receiveOnce(maximumByteCount: maximumByteCount) {
            case let .data(bytes): return bytes
            case .closed: return nil
            case .nothing: continue
            }
        }
    }

    /// One `gnutls_record_recv`, errors mapped: blocks unless the socket is readable or
    /// GnuTLS holds data.
    func receiveOnce(maximumByteCount: Int) throws -> GnuTLSReceived {
        let received: GnuTLSReceived
        do {
            received = try session.receive(maximumByteCount: maximumByteCount)
        } catch let error as GnuTLSSessionError {
            throw readOrWriteError(error)
        }
        switch received {
        case .data: hasRead = true
        case .closed: hasRead = true; peerClosed = true
        case .nothing: break
        }
        return received
    }

    /// Whether decrypted bytes are waiting that ``read(maximumByteCount:timeout:)`` returns
    /// without touching the socket.
    public var hasBufferedData: Bool { session.pendingByteCount > 0 }

    /// The socket, for polling it together with other descriptors.
    public var socketFileDescriptor: Int32 { fileDescriptor }

    /// Send close_notify and, when the connection owns its socket (``connect(host:port:configuration:identity:)``),
    /// close the socket at once, not when the object is freed. Further writes fail; reads
    /// return nil; ``socketFileDescriptor`` is then no longer valid. Calling it again does nothing.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        session.bye()
        if ownsFileDescriptor && !fileDescriptorClosed {
            fileDescriptorClosed = true
            Glibc.close(fileDescriptor)
        }
    }

    private func readOrWriteError(_ error: GnuTLSSessionError) -> RSATLSError {
        switch error {
        case let .alertReceived(code, name):
            if !hasRead && protocolVersion == RSATLSProtocolVersion.tls13.rawValue && clientCertificateRequested
                && RSATLSConnection.clientAuthenticationAlerts.contains(code)
            {
                return .clientCertificateRejected(
                    alert: name, certificateSent: clientCertificateSent || identity != nil)
            }
            return .connectionFailed(reason: "the server sent the fatal alert \"\(name)\"")
        case .closedByPeer:
            return .connectionFailed(
                reason: "the server closed the connection without close_notify (the data may be truncated)")
        case let .transport(reason):
            return .connectionFailed(reason: reason.lowercased())
        case .timedOut:
            return .timedOut(operation: "waiting for \(configuration.serverName)", seconds: configuration.timeout)
        case .notTLS:
            return .connectionFailed(reason: "the server sent bytes that are not a TLS record")
        case .peerRejected, .signingFailed, .failed, .clientCertificateUnavailable:
            if case let .failed(reason) = error { return .connectionFailed(reason: reason) }
            return .connectionFailed(reason: "\(error)")
        }
    }
}
