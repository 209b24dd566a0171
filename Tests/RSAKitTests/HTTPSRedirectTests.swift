import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// Redirects against a real nginx on 127.0.0.1 (Debian `nginx`; skipped without it;
/// ``NginxTestServer``), which requires a client certificate from TestPKI's root
/// (`ssl_verify_client on`): https to https followed, https to http refused, loops cut.
final class HTTPSRedirectTests: XCTestCase {
    private var fixtures: TLSTestFixtures!
    private var nginx: NginxTestServer?

    override func setUpWithError() throws { fixtures = try TLSTestFixtures() }
    override func tearDown() {
        nginx?.stop()
        fixtures.stop()
    }

    private func startNginx() throws -> Int {
        let server = try fixtures.startNginx()
        nginx = server
        return server.port
    }

    private func client(maximumRedirects: Int = 10) throws -> RSAHTTPSClient {
        var configuration = RSAHTTPSClientConfiguration(identity: try fixtures.clientIdentity())
        configuration.tlsConfiguration.anchorCertificates = [try fixtures.pki.certificate("root")]
        configuration.tlsConfiguration.anchorCertificatesOnly = true
        configuration.maximumRedirectCount = maximumRedirects
        return RSAHTTPSClient(configuration: configuration)
    }

    func testRedirect_HTTPSToHTTPS_IsFollowed_WithTheClientCertificate() async throws {
        let port = try startNginx()
        let (body, response) = try await client().data(
            for: RSAHTTPSRequest(url: URL(string: "https://127.0.0.1:\(port)/to-https")!, timeoutInterval: 20))
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(response.url.absoluteString, "https://127.0.0.1:\(port)/ok")
        // nginx offers h2 by ALPN: both exchanges, the 302 and the 200, were HTTP/2.
        XCTAssertEqual(response.httpVersion, "HTTP/2")
        XCTAssertTrue(
            String(decoding: body, as: UTF8.self).contains("CN=RSAKit Test Client"),
            String(decoding: body, as: UTF8.self))
    }

    func testRedirect_HTTPSToHTTP_IsRefused() async throws {
        let port = try startNginx()
        do {
            _ = try await client().data(
                for: RSAHTTPSRequest(url: URL(string: "https://127.0.0.1:\(port)/to-http")!, timeoutInterval: 20))
            XCTFail("followed a redirect to http")
        } catch let error as RSAHTTPSError {
            XCTAssertEqual(
                error, .insecureRedirect(from: "https://127.0.0.1:\(port)/to-http", to: "http://127.0.0.1:\(port)/ok"))
        }
    }

    func testRedirect_Loop_StopsAtTheLimit() async throws {
        let port = try startNginx()
        do {
            _ = try await client(maximumRedirects: 3).data(
                for: RSAHTTPSRequest(url: URL(string: "https://127.0.0.1:\(port)/loop")!, timeoutInterval: 20))
            XCTFail("a redirect loop ended")
        } catch let error as RSAHTTPSError {
            XCTAssertEqual(error, .tooManyRedirects(limit: 3))
        }
    }
}
