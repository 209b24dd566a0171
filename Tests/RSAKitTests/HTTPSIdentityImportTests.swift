import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// A PKCS#12 file downloaded over HTTPS and imported (RSAPKCS12(contentsOf:client:passphrase:),
/// RSAKeyStore.importIdentityAsync(contentsOf:)), and the async server-trust handler, against
/// `openssl s_server -WWW` on 127.0.0.1 serving the test's folder with TestPKI's server chain.
final class HTTPSIdentityImportTests: XCTestCase {
    private var fixtures: TLSTestFixtures!
    private var pki: TestPKI { fixtures.pki }
    private let passphrase = Array("pfx secret".utf8)

    override func setUpWithError() throws { fixtures = try TLSTestFixtures() }
    override func tearDown() { fixtures.stop() }

    /// s_server -WWW with no client certificate asked, serving `client.pfx`, made by
    /// `openssl pkcs12 -export -inkey leaf.key -in client.pem -certfile intermediate.pem
    /// -name "Client Identity" -passout "pass:pfx secret"`.
    private func startServer() throws -> TLSTestServer {
        try OpenSSL.run([
            "pkcs12", "-export", "-inkey", pki.leafKey, "-in", pki.path("client.pem"),
            "-certfile", pki.path("intermediate.pem"), "-name", "Client Identity",
            "-passout", "pass:pfx secret", "-out", fixtures.directory.appendingPathComponent("client.pfx").path
        ])
        return try TLSTestServer(
            openssl: try OpenSSL.require(),
            arguments: [
                "-cert", pki.path("server.pem"), "-cert_chain", pki.path("intermediate.pem"),
                "-key", pki.leafKey, "-WWW"
            ],
            directory: fixtures.directory.path)
    }

    private func client(anchored: Bool = true) throws -> RSAHTTPSClient {
        var configuration = RSAHTTPSClientConfiguration()
        configuration.tlsConfiguration.anchorCertificates = anchored ? [try pki.certificate("root")] : []
        configuration.tlsConfiguration.anchorCertificatesOnly = true
        return RSAHTTPSClient(configuration: configuration)
    }

    private func store() throws -> RSAKeyStore {
        try RSAKeyStore(path: fixtures.directory.appendingPathComponent("store").path)
    }

    func testImportIdentityAsync_OverHTTPS_StoresIt_AndReplacesOnlyWhenAsked() async throws {
        let server = try startServer()
        defer { server.stop() }
        let url = URL(string: "https://127.0.0.1:\(server.port)/client.pfx")!
        let store = try store()
        let (identity, contents) = try await store.importIdentityAsync(
            contentsOf: url, client: client(), passphrase: passphrase)
        XCTAssertEqual(identity.certificate.label, "Client Identity")
        XCTAssertEqual(contents.certificate, try pki.certificate("client"))
        XCTAssertEqual(try store.privateKey(tag: "Client Identity"), try fixtures.leafPrivateKey())
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: fixtures.directory.appendingPathComponent("store/client.pfx").path))
        do {
            try await store.importIdentityAsync(contentsOf: url, client: client(), passphrase: passphrase)
            XCTFail("a second import without replace succeeded")
        } catch RSAError.duplicateItem(let query) {
            XCTAssertEqual(query.label, "Client Identity")
        }
        let replaced = try await store.importIdentityAsync(
            contentsOf: url, client: client(), passphrase: passphrase, replace: true)
        XCTAssertEqual(replaced.identity.certificate.label, "Client Identity")
        XCTAssertEqual(try store.allIdentities().count, 1)
    }

    func testPKCS12ContentsOf_UntrustedServer_NotAPKCS12_TooLarge_WrongPassphrase_Throw() async throws {
        let server = try startServer()
        defer { server.stop() }
        let base = "https://127.0.0.1:\(server.port)/"
        do {
            _ = try await RSAPKCS12(
                contentsOf: URL(string: base + "client.pfx")!, client: client(anchored: false), passphrase: passphrase)
            XCTFail("a server no anchor vouches for was trusted")
        } catch RSATLSError.serverNotTrusted {}
        // s_server -WWW answers a missing file with status 200 and a line of text (so the
        // status check is not reached here): the text is refused as a PKCS#12 file.
        do {
            _ = try await RSAPKCS12(
                contentsOf: URL(string: base + "missing.pfx")!, client: client(), passphrase: passphrase)
            XCTFail("an error page was read as a PKCS#12 file")
        } catch RSAError.pkcs12Unusable {}
        do {
            _ = try await RSAPKCS12(
                contentsOf: URL(string: base + "client.pfx")!, client: client(), passphrase: passphrase,
                maximumByteCount: 100)
            XCTFail("a body over the limit was read")
        } catch RSAHTTPSError.responseTooLarge(let limit) {
            XCTAssertEqual(limit, 100)
        }
        do {
            _ = try await RSAPKCS12(
                contentsOf: URL(string: base + "client.pfx")!, client: client(), passphrase: Array("wrong".utf8))
            XCTFail("a wrong passphrase was accepted")
        } catch is RSAError {}
    }

    /// The async handler is awaited from the handshake's own thread: an actor's answer
    /// decides, through RSAHTTPSClient and RSAAsyncTLSConnection alike.
    func testServerTrustHandlerAsync_AnActorsAnswerDecides() async throws {
        actor Pins {
            var pinned: Set<[UInt8]> = []
            var asked = 0
            func pin(_ fingerprint: [UInt8]) { pinned.insert(fingerprint) }
            func decide(_ trust: RSATrust) -> RSATLSServerTrustDecision {
                asked += 1
                return pinned.contains(trust.certificates[0].fingerprint) ? .performDefaultHandling : .cancel
            }
        }
        let server = try startServer()
        defer { server.stop() }
        let pins = Pins()
        var configuration = RSAHTTPSClientConfiguration()
        configuration.tlsConfiguration.anchorCertificates = [try pki.certificate("root")]
        configuration.tlsConfiguration.anchorCertificatesOnly = true
        configuration.tlsConfiguration.serverTrustHandlerAsync = { trust, _ in await pins.decide(trust) }
        let request = RSAHTTPSRequest(
            url: URL(string: "https://127.0.0.1:\(server.port)/client.pfx")!, timeoutInterval: 20)
        do {
            _ = try await RSAHTTPSClient(configuration: configuration).data(for: request)
            XCTFail("the handler's cancel was ignored")
        } catch let RSATLSError.serverNotTrusted(_, _, refusedByHandler) {
            XCTAssertTrue(refusedByHandler)
        }
        await pins.pin(try pki.certificate("server").fingerprint)
        let (body, response) = try await RSAHTTPSClient(configuration: configuration).data(for: request)
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertFalse(body.isEmpty)

        var tls = try fixtures.configuration(nil)
        tls.serverTrustHandlerAsync = configuration.tlsConfiguration.serverTrustHandlerAsync
        let connection = try await RSAAsyncTLSConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: tls, identity: nil)
        await connection.close()
        let asked = await pins.asked
        XCTAssertEqual(asked, 3)
    }
}
