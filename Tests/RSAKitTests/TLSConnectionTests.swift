import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// RSATLSConnection against a real `openssl s_server` on 127.0.0.1 (TestPKI's certificates:
/// server.rsakit.test and the client certificate, both by the intermediate). Every
/// private-key operation of a handshake is counted: the server verified a signature that
/// RSAKit's engine made, once per handshake, with the scheme the server allowed.
final class TLSConnectionTests: XCTestCase {
    private var fixtures: TLSTestFixtures!
    private var pki: TestPKI { fixtures.pki }

    override func setUpWithError() throws { fixtures = try TLSTestFixtures() }
    override func tearDown() { fixtures.stop() }

    private func startServer(_ extra: [String] = []) throws -> TLSTestServer { try fixtures.startServer(extra) }
    private func leafPrivateKey() throws -> RSAPrivateKey { try fixtures.leafPrivateKey() }
    private func clientIdentity() throws -> RSATLSClientIdentity { try fixtures.clientIdentity() }
    private func configuration(_ version: RSATLSProtocolVersion?, serverName: String = "server.rsakit.test") throws
        -> RSATLSClientConfiguration
    {
        try fixtures.configuration(version, serverName: serverName)
    }

    /// Send a GET, read to the server's close_notify.
    private func fetchPage(_ connection: RSATLSConnection) throws -> String {
        try connection.write(Array("GET / HTTP/1.0\r\n\r\n".utf8))
        var page: [UInt8] = []
        while let bytes = try connection.read(timeout: 20) { page += bytes }
        return String(decoding: page, as: UTF8.self)
    }

    func testHandshake_TLS12AndTLS13_OneRSAKitSignaturePerHandshake() throws {
        let server = try startServer()
        for version in RSATLSProtocolVersion.allCases {
            let connection = try RSATLSConnection.connect(
                host: "127.0.0.1", port: server.port,
                configuration: configuration(version), identity: clientIdentity())
            XCTAssertEqual(connection.protocolVersion, version.rawValue)
            XCTAssertEqual(connection.privateKeyOperations.map(\.scheme), ["rsa_pss_rsae_sha256"])
            XCTAssertEqual(connection.privateKeyOperations.first?.signatureByteCount, 256)
            XCTAssertEqual(connection.clientSignatureAlgorithm, "RSA-PSS-RSAE-SHA256")
            XCTAssertTrue(connection.clientCertificateRequested)
            XCTAssertTrue(connection.clientCertificateSent)
            XCTAssertEqual(connection.trustEvaluation.result, .unspecified)
            XCTAssertEqual(
                connection.serverCertificates.map(\.subjectSummary), ["server.rsakit.test", "RSAKit Test Intermediate"])
            let page = try fetchPage(connection)
            XCTAssertTrue(page.contains("Subject: CN=RSAKit Test Client, O=RSAKit Tests"), page)
            XCTAssertTrue(page.contains("Peer signature type: RSA-PSS"), page)
            // Reads after the server's close_notify return nil; writes fail after close().
            XCTAssertNil(try connection.read(timeout: 1))
            connection.close()
            XCTAssertThrowsError(try connection.write([1]))
        }
    }

    func testHandshake_SchemeTheServerAllows_IsTheOneRSAKitSigns() throws {
        // (s_server -client_sigalgs, protocol, the scheme rsakit must have used)
        let cases: [(String, RSATLSProtocolVersion, String, String)] = [
            ("rsa_pss_rsae_sha384", .tls13, "rsa_pss_rsae_sha384", "RSA-PSS-RSAE-SHA384"),
            ("rsa_pss_rsae_sha512", .tls12, "rsa_pss_rsae_sha512", "RSA-PSS-RSAE-SHA512"),
            // PKCS#1 v1.5: GnuTLS hands over the DigestInfo (19 + 32 bytes for SHA-256).
            ("RSA+SHA256", .tls12, "rsa_pkcs1 (DigestInfo, 51 bytes)", "RSA-SHA256"),
            ("RSA+SHA512", .tls12, "rsa_pkcs1 (DigestInfo, 83 bytes)", "RSA-SHA512")
        ]
        for (sigalgs, version, scheme, gnutlsName) in cases {
            let server = try startServer(["-client_sigalgs", sigalgs])
            let connection = try RSATLSConnection.connect(
                host: "127.0.0.1", port: server.port,
                configuration: configuration(version), identity: clientIdentity())
            XCTAssertEqual(connection.privateKeyOperations.map(\.scheme), [scheme], sigalgs)
            XCTAssertEqual(connection.clientSignatureAlgorithm, gnutlsName, sigalgs)
            XCTAssertTrue(try fetchPage(connection).contains("Subject: CN=RSAKit Test Client"), sigalgs)
            server.stop()
        }
    }

    func testClientCertificateRejected_TLS12InTheHandshake_TLS13OnTheFirstRead() throws {
        // A certificate from a root the server does not know (untrusted-leaf.pem, leaf.key).
        let stranger = try RSATLSClientIdentity(
            privateKey: leafPrivateKey(), certificate: pki.certificate("untrusted-leaf"))
        let server = try startServer()
        XCTAssertThrowsError(
            try RSATLSConnection.connect(
                host: "127.0.0.1", port: server.port,
                configuration: configuration(.tls12), identity: stranger)
        ) { error in
            guard case let RSATLSError.clientCertificateRejected(alert, sent) = error else {
                return XCTFail("\(error)")
            }
            XCTAssertTrue(sent)
            XCTAssertEqual(alert, "CA is unknown")
        }
        let connection = try RSATLSConnection.connect(
            host: "127.0.0.1", port: server.port,
            configuration: configuration(.tls13), identity: stranger)
        XCTAssertEqual(connection.privateKeyOperations.count, 1)
        try connection.write(Array("GET / HTTP/1.0\r\n\r\n".utf8))
        XCTAssertThrowsError(try connection.read(timeout: 20)) { error in
            XCTAssertEqual(
                error as? RSATLSError, .clientCertificateRejected(alert: "CA is unknown", certificateSent: true))
            XCTAssertEqual(
                (error as? RSATLSError)?.description,
                "the server rejected the client certificate (alert: CA is unknown)")
        }
    }

    func testNoIdentity_ServerRequiringOne_SaysNoneWasGiven() throws {
        let server = try startServer()
        XCTAssertThrowsError(
            try RSATLSConnection.connect(
                host: "127.0.0.1", port: server.port,
                configuration: configuration(.tls12), identity: nil)
        ) { error in
            guard case RSATLSError.clientCertificateRejected(_, false) = error else { return XCTFail("\(error)") }
        }
    }

    func testServerTrust_HostnameAndAnchors_FailBeforeTheClientSigns() throws {
        let server = try startServer()
        XCTAssertThrowsError(
            try RSATLSConnection.connect(
                host: "127.0.0.1", port: server.port,
                configuration: configuration(nil, serverName: "other.example"),
                identity: clientIdentity())
        ) { error in
            guard case let RSATLSError.serverNotTrusted(evaluation, sent, refusedByHandler) = error else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(evaluation.result, .recoverableTrustFailure)
            XCTAssertFalse(refusedByHandler)
            // Typed: the kind, the certificate's index, and the chain, for a caller to act on.
            XCTAssertEqual(evaluation.failures.map(\.kind), [.hostnameMismatch(hostname: "other.example")])
            XCTAssertEqual(evaluation.failures.map(\.chainIndex), [0])
            XCTAssertEqual(
                evaluation.chain.map(\.subjectSummary),
                ["server.rsakit.test", "RSAKit Test Intermediate", "RSAKit Test Root CA"])
            XCTAssertEqual(
                sent, [try? self.pki.certificate("server"), try? self.pki.certificate("intermediate")].compactMap { $0 }
            )
            XCTAssertEqual(
                evaluation.reasons, ["certificate 0 (server.rsakit.test): not valid for the hostname \"other.example\""]
            )
        }
        var unknown = try configuration(.tls13)
        unknown.anchorCertificates = [try pki.certificate("untrusted-root")]
        XCTAssertThrowsError(
            try RSATLSConnection.connect(
                host: "127.0.0.1", port: server.port, configuration: unknown,
                identity: clientIdentity())
        ) { error in
            guard case let RSATLSError.serverNotTrusted(evaluation, _, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(evaluation.result, .recoverableTrustFailure)
            let reasons = evaluation.reasons
            XCTAssertEqual(reasons.count, 1)
            XCTAssertTrue(
                reasons[0].contains("issuer \"O=RSAKit Tests,CN=RSAKit Test Root CA\" not found")
                    || reasons[0].contains("not found among"), reasons[0])
        }
        // The IP address as the name: matched against the IP subjectAltName, no SNI sent.
        let byAddress = try RSATLSConnection.connect(
            host: "127.0.0.1", port: server.port,
            configuration: configuration(nil, serverName: "127.0.0.1"), identity: clientIdentity())
        XCTAssertEqual(byAddress.trustEvaluation.result, .unspecified)
    }

    /// The trust handler sees the evaluation inside the handshake and decides, as
    /// URLSession's server-trust challenge; a pinned leaf is enough of an anchor.
    func testServerTrustHandler_TrustsOrCancels_AndAPinnedLeafConnects() throws {
        let server = try startServer()
        let seen = TLSHandlerLog()
        // A wrong name, trusted by the handler (a user's "connect anyway"): the handshake completes.
        var anyway = try configuration(.tls13, serverName: "other.example")
        anyway.serverTrustHandler = { trust, evaluation in
            seen.record(evaluation.result, trust.certificates.count)
            return evaluation.failures.map(\.kind) == [.hostnameMismatch(hostname: "other.example")] ? .trust : .cancel
        }
        let connection = try RSATLSConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: anyway,
            identity: clientIdentity())
        XCTAssertEqual(connection.serverTrustDecision, .trust)
        XCTAssertEqual(connection.trustEvaluation.result, .recoverableTrustFailure)
        XCTAssertTrue(try fetchPage(connection).contains("HTTP/1.0 200 ok"))
        XCTAssertEqual(seen.entries, ["recoverable-trust-failure/2"], "called once, with the 2 certificates sent")
        connection.close()  // s_server serves one client at a time: it waits for this socket to close

        // A good chain cancelled by the handler: refused before the client signs.
        var refuse = try configuration(.tls12)
        refuse.serverTrustHandler = { _, _ in .cancel }
        XCTAssertThrowsError(
            try RSATLSConnection.connect(
                host: "127.0.0.1", port: server.port, configuration: refuse,
                identity: clientIdentity())
        ) { error in
            guard case let RSATLSError.serverNotTrusted(evaluation, _, refusedByHandler) = error else {
                return XCTFail("\(error)")
            }
            XCTAssertTrue(refusedByHandler)
            XCTAssertEqual(evaluation.result, .unspecified)
            XCTAssertTrue("\(error)".hasPrefix("the server trust handler refused the server"), "\(error)")
        }

        // The server's own certificate as the only anchor.
        var pinned = try configuration(nil)
        pinned.anchorCertificates = [try pki.certificate("server")]
        let pinnedConnection = try RSATLSConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: pinned,
            identity: clientIdentity())
        XCTAssertEqual(pinnedConnection.trustEvaluation.result, .unspecified)
        XCTAssertEqual(pinnedConnection.trustEvaluation.chain, [try pki.certificate("server")])
        pinnedConnection.close()
    }

    /// Writing after the server closed is an error, never a SIGPIPE that ends the host
    /// process (the test process keeps SIGPIPE's default action): GnuTLS sends with MSG_NOSIGNAL.
    func testWriteAfterTheServerClosed_ThrowsInsteadOfSIGPIPE() throws {
        let server = try startServer()
        let connection = try RSATLSConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: configuration(.tls12),
            identity: clientIdentity())
        XCTAssertTrue(try fetchPage(connection).contains("HTTP/1.0 200 ok"))
        server.stop()  // the server process ends: its socket is closed, writes meet RST then EPIPE
        var failure: Error?
        for _ in 0..<20 where failure == nil {
            do { try connection.write(Array(repeating: 0x41, count: 4096)) } catch { failure = error }
            usleep(10_000)
        }
        guard case .connectionFailed? = failure as? RSATLSError else {
            return XCTFail("\(String(describing: failure))")
        }
        connection.close()
    }

    /// `close()` closes the socket it owns at once, not when the object is freed.
    func testClose_ClosesTheSocket() throws {
        let server = try startServer()
        let connection = try RSATLSConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: configuration(nil),
            identity: clientIdentity())
        let fd = connection.socketFileDescriptor
        XCTAssertNotEqual(fcntl(fd, F_GETFD), -1)
        connection.close()
        XCTAssertEqual(fcntl(fd, F_GETFD), -1, "the descriptor is closed")
        XCTAssertEqual(errno, EBADF)
        XCTAssertNil(try connection.read(timeout: 1))
        XCTAssertThrowsError(try connection.write([1]))
        connection.close()  // again: nothing happens
        withExtendedLifetime(connection) {}
    }

    func testIdentity_CertificateForAnotherKey_IsRefused() throws {
        let other = try RSAKeyFile(bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: pki.untrustedRootKey))))
        guard case let .privateKey(otherKey) = other.key else { return XCTFail("not a private key") }
        XCTAssertThrowsError(try RSATLSClientIdentity(privateKey: otherKey, certificate: pki.certificate("client"))) {
            error in
            guard case RSATLSError.identityUnusable = error else { return XCTFail("\(error)") }
        }
    }

    func testHandshake_ServerThatNeverAnswers_TimesOut() throws {
        let port = try fixtures.silentListener()
        var settings = try configuration(nil)
        settings.timeout = 1
        let start = Date()
        XCTAssertThrowsError(
            try RSATLSConnection.connect(
                host: "127.0.0.1", port: port,
                configuration: settings, identity: nil)
        ) { error in
            XCTAssertEqual(
                error as? RSATLSError, .timedOut(operation: "the TLS handshake with server.rsakit.test", seconds: 1))
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
    }
}

/// What a trust handler saw, from the handshake's thread.
private final class TLSHandlerLog: @unchecked Sendable {
    private let lock = NSLock()
    private var log: [String] = []
    func record(_ result: RSATrustResult, _ count: Int) { lock.withLock { log.append("\(result)/\(count)") } }
    var entries: [String] { lock.withLock { log } }
}
