import Foundation
import XCTest
import RSAKitTestSupport

/// `rsakit fetch` against a real `openssl s_server -WWW` on 127.0.0.1 requiring a client
/// certificate from the test root; it serves the files of the test's folder. Every run is
/// bounded by coreutils `timeout` (60 s) and by its own `--timeout`.
final class CLIFetchTests: CLITestCase {
    private var pki: TLSTestPKI!
    private var opensslPath = ""
    private var server: TLSTestServer?
    private var nginx: NginxTestServer?

    override func setUpWithError() throws {
        try super.setUpWithError()
        opensslPath = try openssl()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/timeout") else {
            throw XCTSkip("coreutils timeout not found: the fetch tests need it to bound every run")
        }
        pki = try TLSTestPKI.shared(openssl: opensslPath)
    }

    override func tearDownWithError() throws {
        server?.stop()
        nginx?.stop()
        try super.tearDownWithError()
    }

    private func startServer() throws -> TLSTestServer {
        let started = try TLSTestServer(
            openssl: opensslPath,
            arguments: [
                "-Verify", "5", "-verify_return_error", "-CAfile", pki.path("ca.pem"),
                "-cert", pki.path("srv.pem"), "-cert_chain", pki.path("int.pem"),
                "-key", pki.path("srv.key"), "-WWW"
            ],
            directory: workDirectory.path)
        server = started
        return started
    }

    private func fetch(_ server: TLSTestServer, _ name: String, _ options: [String]) throws -> Result {
        let result = try runProcess(
            "/usr/bin/timeout",
            [
                "-k", "5", "60", Self.binary.path, "fetch",
                "https://127.0.0.1:\(server.port)/\(name)", "--timeout", "20"
            ] + options)
        XCTAssertNotEqual(result.status, 124, "rsakit fetch hung: \(result.stderr)")
        return result
    }

    private func importAlice() throws {
        try rsakitOK(["identity", "import", pki.path("alice.p12"), "--label", "alice", "--passin", "pass:alicepass"])
    }

    func testFetch_StoredIdentity_BodyToStandardOutputAndToAFile() throws {
        try importAlice()
        try Data("report body\n".utf8).write(to: URL(fileURLWithPath: path("report.txt")))
        let server = try startServer()
        let anchor = ["--identity", "alice", "--anchor", pki.path("ca.pem")]
        let toStdout = try fetch(server, "report.txt", anchor + ["-v"])
        XCTAssertEqual(toStdout.status, 0, toStdout.stderr)
        XCTAssertEqual(toStdout.stdoutText, "report body\n")
        XCTAssertTrue(
            toStdout.stderr.contains(" 200 from https://127.0.0.1:\(server.port)/report.txt"), toStdout.stderr)
        let toFile = try fetch(server, "report.txt", anchor + ["--out", path("copy.txt")])
        XCTAssertEqual(toFile.status, 0, toFile.stderr)
        XCTAssertEqual(toFile.stdoutText, "")
        XCTAssertEqual(try String(contentsOfFile: path("copy.txt"), encoding: .utf8), "report body\n")
        XCTAssertTrue(server.waitForLog("alice"), server.log)
    }

    func testFetch_ServerFromAnotherCA_Exits65() throws {
        try importAlice()
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: path("s.txt")))
        let server = try startServer()
        let result = try fetch(
            server, "s.txt", ["--identity", "alice", "--anchor", pki.path("other.pem"), "--anchors-only"])
        XCTAssertEqual(result.status, 65, result.stderr)
        XCTAssertTrue(result.stderr.contains("not trusted"), result.stderr)
        XCTAssertEqual(result.stdoutText, "")
    }

    func testFetch_UnknownIdentity_Exits66_NoIdentity_Exits65() throws {
        try importAlice()
        let server = try startServer()
        let unknown = try fetch(server, "x", ["--identity", "nobody", "--anchor", pki.path("ca.pem")])
        XCTAssertEqual(unknown.status, 66, unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("no identity with label \"nobody\""), unknown.stderr)
        let none = try fetch(server, "x", ["--anchor", pki.path("ca.pem")])
        XCTAssertEqual(none.status, 65, none.stderr)
        XCTAssertTrue(none.stderr.contains("requires a client certificate"), none.stderr)
    }

    /// nginx (`listen ... ssl http2`, client certificate required from the test CA).
    private func startNginx() throws -> NginxTestServer {
        let chain =
            try String(contentsOfFile: pki.path("srv.pem"), encoding: .utf8)
            + String(contentsOfFile: pki.path("int.pem"), encoding: .utf8)
        try chain.write(toFile: path("chain.pem"), atomically: true, encoding: .utf8)
        let started = try NginxTestServer(
            chain: path("chain.pem"), key: pki.path("srv.key"), clientCA: pki.path("ca.pem"),
            directory: workDirectory.path)
        nginx = started
        return started
    }

    private func fetch(_ url: URL, _ options: [String]) throws -> Result {
        let result = try runProcess(
            "/usr/bin/timeout",
            ["-k", "5", "60", Self.binary.path, "fetch", url.absoluteString, "--timeout", "20"] + options)
        XCTAssertNotEqual(result.status, 124, "rsakit fetch hung: \(result.stderr)")
        return result
    }

    func testFetch_HTTP2Server_VerboseSaysHTTP2_AndHTTP11OnRequest() throws {
        try importAlice()
        let nginx = try startNginx()
        let anchor = ["--identity", "alice", "--anchor", pki.path("ca.pem"), "-v"]
        let h2 = try fetch(nginx.url("/ok"), anchor)
        XCTAssertEqual(h2.status, 0, h2.stderr)
        XCTAssertEqual(h2.stdoutText, "ok O=RSAKit Tests,CN=alice\n")
        XCTAssertTrue(h2.stderr.contains("rsakit: HTTP/2 200 from \(nginx.url("/ok").absoluteString)\n"), h2.stderr)
        let h1 = try fetch(nginx.url("/ok"), anchor + ["--http1.1"])
        XCTAssertEqual(h1.status, 0, h1.stderr)
        XCTAssertEqual(h1.stdoutText, "ok O=RSAKit Tests,CN=alice\n")
        XCTAssertTrue(h1.stderr.contains("rsakit: HTTP/1.1 200 from "), h1.stderr)
    }

    func testFetch_404And500_Exit1_WithTheStatus_AndWriteNothing() throws {
        try importAlice()
        let nginx = try startNginx()
        for (location, status) in [("/missing", 404), ("/broken", 500)] {
            let toStdout = try fetch(nginx.url(location), ["--identity", "alice", "--anchor", pki.path("ca.pem")])
            XCTAssertEqual(toStdout.status, 1, toStdout.stderr)
            XCTAssertEqual(toStdout.stdoutText, "", "the error page reached standard output")
            XCTAssertEqual(
                toStdout.stderr,
                "rsakit: error: HTTP status \(status) from \(nginx.url(location).absoluteString) (nothing was "
                    + "written)\n"
            )
            let toFile = try fetch(
                nginx.url(location),
                ["--identity", "alice", "--anchor", pki.path("ca.pem"), "--out", path("page-\(status)")])
            XCTAssertEqual(toFile.status, 1, toFile.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path("page-\(status)")))
        }
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter { $0.hasPrefix("page-") }, []
        )
    }

    func testFetch_NotAnHTTPSURL_IsAUsageError() throws {
        let result = try rsakit(["fetch", "http://127.0.0.1:1/x"])
        XCTAssertEqual(result.status, 64)
        XCTAssertTrue(result.stderr.contains("expected an https:// URL"), result.stderr)
    }
}
