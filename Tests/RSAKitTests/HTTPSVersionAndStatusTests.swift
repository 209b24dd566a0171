import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// RSAHTTPSClient against a real nginx on 127.0.0.1 (``NginxTestServer``: `listen ... ssl
/// http2`, a client certificate required): HTTP/2 when the server selects h2 by ALPN, HTTP/1.1
/// when the request forbids h2, and answers that are not 2xx (404, 500) as responses, not
/// errors, with nothing left by a download.
final class HTTPSVersionAndStatusTests: XCTestCase {
    private var fixtures: TLSTestFixtures!
    private var nginx: NginxTestServer!

    override func setUpWithError() throws {
        fixtures = try TLSTestFixtures()
        nginx = try fixtures.startNginx()
    }

    override func tearDown() {
        nginx?.stop()
        fixtures.stop()
    }

    private func client() throws -> RSAHTTPSClient {
        var configuration = RSAHTTPSClientConfiguration(identity: try fixtures.clientIdentity())
        configuration.tlsConfiguration.anchorCertificates = [try fixtures.pki.certificate("root")]
        configuration.tlsConfiguration.anchorCertificatesOnly = true
        return RSAHTTPSClient(configuration: configuration)
    }

    func testData_ServerSelectingH2_IsSpokenInHTTP2_UnlessTheRequestForbidsIt() async throws {
        let client = try client()
        // 40 KB: more than one HTTP/2 DATA frame (16 KiB by default) and one TLS record.
        let body = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try Data(body).write(to: fixtures.directory.appendingPathComponent("frames.bin"))
        let (received, response) = try await client.data(
            for: RSAHTTPSRequest(url: nginx.url("/files/frames.bin"), timeoutInterval: 20))
        XCTAssertEqual(response.httpVersion, "HTTP/2")
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(response.expectedContentLength, 40_000)
        XCTAssertEqual([UInt8](received), body)

        var request = RSAHTTPSRequest(url: nginx.url("/ok"), timeoutInterval: 20)
        request.allowsHTTP2 = false
        let (page, answer) = try await client.data(for: request)
        XCTAssertEqual(answer.httpVersion, "HTTP/1.1")
        XCTAssertTrue(
            String(decoding: page, as: UTF8.self).contains("CN=RSAKit Test Client"),
            String(decoding: page, as: UTF8.self))
    }

    func testData_404And500_AreReturnedWithTheirStatusAndPage() async throws {
        let client = try client()
        for (path, status, page) in [
            ("/missing", 404, "no such report\n"), ("/broken", 500, "the report service failed\n")
        ] {
            let (body, response) = try await client.data(
                for: RSAHTTPSRequest(url: nginx.url(path), timeoutInterval: 20))
            XCTAssertEqual(response.statusCode, status, path)
            XCTAssertFalse(response.isSuccess, path)
            XCTAssertEqual(response.httpVersion, "HTTP/2", path)
            XCTAssertEqual(String(decoding: body, as: UTF8.self), page, path)
        }
    }

    func testDownload_404And500_LeaveNoFile() async throws {
        let client = try client()
        for (path, status) in [("/missing", 404), ("/broken", 500)] {
            let destination = fixtures.directory.appendingPathComponent("out-\(status).txt")
            let response = try await client.download(
                for: RSAHTTPSRequest(url: nginx.url(path), timeoutInterval: 20), toPath: destination.path)
            XCTAssertEqual(response.statusCode, status, path)
            XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "\(path) left \(destination.path)")
        }
        // No temporary file either: the folder holds what the fixture put there, nothing with "out-".
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: fixtures.directory.path).filter { $0.contains("out-") },
            [])
    }

    /// Cancellation reaches an HTTP/2 transfer too (libcurl's progress callback), and the
    /// partial body is dropped.
    func testDownload_HTTP2_CancelledMidBody_ThrowsCancellationAndLeavesNothing() async throws {
        let source = fixtures.directory.appendingPathComponent("huge.bin")
        _ = FileManager.default.createFile(atPath: source.path, contents: nil)
        let handle = try FileHandle(forWritingTo: source)
        try handle.truncate(atOffset: 1 << 30)  // sparse: 1 GiB that costs no disk
        try handle.close()
        let destination = fixtures.directory.appendingPathComponent("partial.bin")
        let client = try client()
        let request = RSAHTTPSRequest(url: nginx.url("/files/huge.bin"), timeoutInterval: 20)
        let task = Task { try await client.download(for: request, toPath: destination.path) }
        try await Task.sleep(nanoseconds: 500_000_000)
        let cancelled = Date()
        task.cancel()
        do {
            let response = try await task.value
            XCTFail("a 1 GiB download finished within 0.5 s (\(response.httpVersion))")
        } catch is CancellationError {
        }
        XCTAssertLessThan(Date().timeIntervalSince(cancelled), 2, "the transfer did not stop promptly")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }
}
