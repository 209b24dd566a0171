import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// Redirects against a real nginx on 127.0.0.1 (Debian `nginx`; skipped without it), started
/// with a temporary configuration that requires a client certificate from TestPKI's root
/// (`ssl_verify_client on`): https to https followed, https to http refused, loops cut.
final class HTTPSRedirectTests: XCTestCase {
    private var fixtures: TLSTestFixtures!
    private var nginx: ChildProcess?

    override func setUpWithError() throws { fixtures = try TLSTestFixtures() }
    override func tearDown() {
        if let nginx, nginx.isRunning { nginx.kill9(); _ = try? nginx.wait(timeout: 2) }
        fixtures.stop()
    }

    private func startNginx() throws -> Int {
        guard let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("nginx is not installed (apt-get install nginx)")
        }
        let pki = fixtures.pki
        let dir = fixtures.directory.path
        let chain = try String(contentsOfFile: pki.path("server.pem"), encoding: .utf8) + String(contentsOfFile: pki.path("intermediate.pem"), encoding: .utf8)
        try chain.write(toFile: dir + "/chain.pem", atomically: true, encoding: .utf8)
        let port = try TLSTestServer.freePort()
        let config = """
        daemon off; master_process off; pid \(dir)/nginx.pid; error_log \(dir)/nginx-error.log;
        events { }
        http {
            access_log off;
            client_body_temp_path \(dir); proxy_temp_path \(dir); fastcgi_temp_path \(dir); uwsgi_temp_path \(dir); scgi_temp_path \(dir);
            server {
                listen 127.0.0.1:\(port) ssl;
                ssl_certificate \(dir)/chain.pem; ssl_certificate_key \(pki.leafKey);
                ssl_client_certificate \(pki.path("root.pem")); ssl_verify_client on; ssl_verify_depth 3;
                location = /to-https { return 302 /ok; }
                location = /to-http { return 302 http://127.0.0.1:\(port)/ok; }
                location = /loop { return 302 /loop; }
                location = /ok { return 200 "ok $ssl_client_s_dn\\n"; }
            }
        }
        """
        try config.write(toFile: dir + "/nginx.conf", atomically: true, encoding: .utf8)
        nginx = try ChildProcess([binary, "-p", dir, "-c", dir + "/nginx.conf", "-e", dir + "/nginx-error.log"], directory: dir,
                                 stdout: .appending(dir + "/nginx.out"), stderr: .appending(dir + "/nginx.out"))
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if connected { return port }
            usleep(20_000)
        }
        let log = (try? String(contentsOfFile: dir + "/nginx.out", encoding: .utf8)) ?? ""
        throw XCTSkip("nginx did not start: \(log)")
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
        let (body, response) = try await client().data(for: RSAHTTPSRequest(url: URL(string: "https://127.0.0.1:\(port)/to-https")!, timeoutInterval: 20))
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(response.url.absoluteString, "https://127.0.0.1:\(port)/ok")
        XCTAssertEqual(response.httpVersion, "HTTP/1.1")
        XCTAssertTrue(String(decoding: body, as: UTF8.self).contains("CN=RSAKit Test Client"), String(decoding: body, as: UTF8.self))
    }

    func testRedirect_HTTPSToHTTP_IsRefused() async throws {
        let port = try startNginx()
        do {
            _ = try await client().data(for: RSAHTTPSRequest(url: URL(string: "https://127.0.0.1:\(port)/to-http")!, timeoutInterval: 20))
            XCTFail("followed a redirect to http")
        } catch let error as RSAHTTPSError {
            XCTAssertEqual(error, .insecureRedirect(from: "https://127.0.0.1:\(port)/to-http", to: "http://127.0.0.1:\(port)/ok"))
        }
    }

    func testRedirect_Loop_StopsAtTheLimit() async throws {
        let port = try startNginx()
        do {
            _ = try await client(maximumRedirects: 3).data(for: RSAHTTPSRequest(url: URL(string: "https://127.0.0.1:\(port)/loop")!, timeoutInterval: 20))
            XCTFail("a redirect loop ended")
        } catch let error as RSAHTTPSError {
            XCTAssertEqual(error, .tooManyRedirects(limit: 3))
        }
    }
}
