import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// The client-certificate challenge answered by an async handler that awaits an actor,
/// against real `openssl s_server` on 127.0.0.1: asked when the server requests a certificate
/// (`-Verify 1`: required), never when it does not; for RSAAsyncTLSConnection (inside the
/// handshake) and RSAHTTPSClient. ALPN against `s_server -alpn`.
final class TLSClientIdentityHandlerTests: XCTestCase {
    private var fixtures: TLSTestFixtures!
    private var pki: TestPKI { fixtures.pki }
    private var servers: [TLSTestServer] = []

    override func setUpWithError() throws { fixtures = try TLSTestFixtures() }
    override func tearDown() {
        servers.forEach { $0.stop() }
        fixtures.stop()
    }

    /// The identity behind an actor, as an app keeps the one it imported; counts the requests.
    actor IdentityHolder {
        private let identity: RSATLSClientIdentity
        private(set) var requests: [String] = []
        init(_ identity: RSATLSClientIdentity) { self.identity = identity }
        func answer(_ request: String) -> RSATLSClientIdentity {
            requests.append(request)
            return identity
        }
    }

    /// s_server with TestPKI's server chain; `-Verify 1 -verify_return_error` when `requiring`.
    private func startServer(requiring: Bool, _ extra: [String]) throws -> TLSTestServer {
        let verify = requiring ? ["-Verify", "1", "-verify_return_error", "-CAfile", pki.path("root.pem")] : []
        let server = try TLSTestServer(
            openssl: try OpenSSL.require(),
            arguments: verify + [
                "-cert", pki.path("server.pem"), "-cert_chain", pki.path("intermediate.pem"),
                "-key", pki.leafKey
            ] + extra,
            directory: fixtures.directory.path)
        servers.append(server)
        return server
    }

    /// One request over the connection; the status line of s_server -www's answer.
    private func statusLine(_ connection: RSAAsyncTLSConnection) async throws -> String {
        try await connection.write(Array("GET / HTTP/1.0\r\n\r\n".utf8))
        var page: [UInt8] = []
        while let chunk = try await connection.read(timeout: 10) { page += chunk }
        return String(decoding: page, as: UTF8.self).split(separator: "\r\n").first.map(String.init) ?? ""
    }

    func testAsyncHandler_ActorHeldIdentity_GivenWhenTheServerAsks_InTLS13AndTLS12() async throws {
        let holder = IdentityHolder(try fixtures.clientIdentity())
        let server = try startServer(requiring: true, ["-www"])
        for version in [RSATLSProtocolVersion.tls13, .tls12] {
            var configuration = try fixtures.configuration(version)
            configuration.clientIdentityHandlerAsync = { request in
                // TLS 1.3 asks before the server's Certificate; TLS 1.2 after it was trusted.
                let seen = request.serverCertificates.first?.subjectSummary ?? "-"
                return await holder.answer(
                    "\(version.rawValue) \(request.serverName) \(seen) CAs:\(request.acceptableIssuerNames.count)")
            }
            let connection = try await RSAAsyncTLSConnection.connect(
                host: "127.0.0.1", port: server.port,
                configuration: configuration, identity: nil)
            XCTAssertTrue(connection.clientCertificateRequested)
            XCTAssertTrue(connection.clientCertificateSent)
            XCTAssertEqual(connection.identity?.name, "client")
            XCTAssertEqual(connection.privateKeyOperations.count, 1)
            // The server verified the certificate and answered.
            let status = try await statusLine(connection)
            XCTAssertEqual(status, "HTTP/1.0 200 ok", "\(version)")
            await connection.close()
        }
        // s_server names its -CAfile's root as the one CA it accepts.
        let requests = await holder.requests
        XCTAssertEqual(
            requests, ["TLS1.3 server.rsakit.test - CAs:1", "TLS1.2 server.rsakit.test server.rsakit.test CAs:1"])
    }

    /// The synchronous handler, on RSATLSConnection: what it throws ends the handshake and is
    /// thrown as itself, before any certificate is sent.
    func testSyncHandler_ItsErrorEndsTheConnect() throws {
        struct NoIdentityForThisServer: Error, Equatable { let server: String }
        let server = try startServer(requiring: true, ["-www"])
        var configuration = try fixtures.configuration(.tls12)
        configuration.clientIdentityHandler = { request in throw NoIdentityForThisServer(server: request.serverName) }
        XCTAssertThrowsError(
            try RSATLSConnection.connect(
                host: "127.0.0.1", port: server.port, configuration: configuration, identity: nil)
        ) {
            XCTAssertEqual(
                $0 as? NoIdentityForThisServer, NoIdentityForThisServer(server: "server.rsakit.test"),
                String(reflecting: $0))
        }
    }

    func testAsyncHandler_ServerNotAsking_IsNeverCalled() async throws {
        let holder = IdentityHolder(try fixtures.clientIdentity())
        let server = try startServer(requiring: false, ["-www"])
        var configuration = try fixtures.configuration(nil)
        configuration.clientIdentityHandlerAsync = { await holder.answer("\($0.serverName)") }
        let connection = try await RSAAsyncTLSConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: configuration, identity: nil)
        XCTAssertFalse(connection.clientCertificateRequested)
        XCTAssertFalse(connection.clientCertificateSent)
        XCTAssertNil(connection.identity)
        let status = try await statusLine(connection)
        XCTAssertEqual(status, "HTTP/1.0 200 ok")
        let requests = await holder.requests
        XCTAssertEqual(requests, [])
    }

    func testAsyncHandler_NotAnsweringWithinTheTimeout_EndsTheHandshake() async throws {
        let server = try startServer(requiring: true, ["-www"])
        var configuration = try fixtures.configuration(.tls13)
        configuration.timeout = 1
        configuration.clientIdentityHandlerAsync = { _ in
            try? await Task.sleep(nanoseconds: 5_000_000_000)
            return nil
        }
        let started = Date()
        do {
            _ = try await RSAAsyncTLSConnection.connect(
                host: "127.0.0.1", port: server.port, configuration: configuration, identity: nil)
            XCTFail("connected without an answer from the handler")
        } catch let RSATLSError.timedOut(operation, seconds) {
            XCTAssertEqual(operation, "the client identity handler for server.rsakit.test")
            XCTAssertEqual(seconds, 1)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
    }

    func testHTTPSAsyncHandler_ActorHeldIdentity_AskedOnlyWhenTheServerWantsOne() async throws {
        try Data("for the handler\n".utf8).write(to: fixtures.directory.appendingPathComponent("h.txt"))
        let holder = IdentityHolder(try fixtures.clientIdentity())
        var configuration = RSAHTTPSClientConfiguration()
        configuration.tlsConfiguration.anchorCertificates = [try pki.certificate("root")]
        configuration.tlsConfiguration.anchorCertificatesOnly = true
        configuration.clientIdentityHandlerAsync = { challenge in
            await holder.answer("\(challenge.host) \(challenge.serverCertificates.first?.subjectSummary ?? "-")")
        }
        let client = RSAHTTPSClient(configuration: configuration)
        let asking = try startServer(requiring: true, ["-WWW"])
        let (body, response) = try await client.data(
            for: RSAHTTPSRequest(url: URL(string: "https://127.0.0.1:\(asking.port)/h.txt")!, timeoutInterval: 20))
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "for the handler\n")
        XCTAssertTrue(asking.waitForLog("RSAKit Test Client"), asking.log)
        let afterAsking = await holder.requests
        XCTAssertEqual(afterAsking, ["127.0.0.1 server.rsakit.test"])

        let silent = try startServer(requiring: false, ["-WWW"])
        let (again, plain) = try await client.data(
            for: RSAHTTPSRequest(url: URL(string: "https://127.0.0.1:\(silent.port)/h.txt")!, timeoutInterval: 20))
        XCTAssertEqual(plain.statusCode, 200)
        XCTAssertEqual(String(decoding: again, as: UTF8.self), "for the handler\n")
        let afterSilent = await holder.requests
        XCTAssertEqual(
            afterSilent, ["127.0.0.1 server.rsakit.test"], "asked by a server that did not want a certificate")
    }

    // MARK: ALPN

    func testALPN_TheServersChoiceFromTheOffer_IsTheNegotiatedProtocol() async throws {
        // s_server picks its own first protocol that the client offered.
        let server = try startServer(requiring: false, ["-www", "-alpn", "http/1.1,h2"])
        var configuration = try fixtures.configuration(nil)
        configuration.applicationProtocols = ["h2", "http/1.1"]
        let offered = try await RSAAsyncTLSConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: configuration, identity: nil)
        XCTAssertEqual(offered.negotiatedApplicationProtocol, "http/1.1")
        await offered.close()
        configuration.applicationProtocols = ["h2"]
        let onlyH2 = try await RSAAsyncTLSConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: configuration, identity: nil)
        XCTAssertEqual(onlyH2.negotiatedApplicationProtocol, "h2")
        await onlyH2.close()
        configuration.applicationProtocols = []
        let none = try await RSAAsyncTLSConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: configuration, identity: nil)
        XCTAssertNil(none.negotiatedApplicationProtocol)
        await none.close()
        configuration.applicationProtocols = ["h2", ""]
        do {
            _ = try await RSAAsyncTLSConnection.connect(
                host: "127.0.0.1", port: server.port, configuration: configuration, identity: nil)
            XCTFail("an empty ALPN name was offered")
        } catch let RSATLSError.handshakeFailed(reason) {
            XCTAssertTrue(reason.contains("1 to 255 bytes"), reason)
        }
    }
}
