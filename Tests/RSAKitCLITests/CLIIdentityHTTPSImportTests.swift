import Foundation
import XCTest
import RSAKitTestSupport

/// `rsakit identity import https://…` against `openssl s_server -WWW` on 127.0.0.1 (no client
/// certificate asked) serving TLSTestPKI's alice.p12 (`openssl pkcs12 -export -inkey alice.key
/// -in alice.pem -name alice -passout pass:alicepass`). Every run is bounded by coreutils `timeout`.
final class CLIIdentityHTTPSImportTests: CLITestCase {
    private var pki: TLSTestPKI!
    private var server: TLSTestServer?

    override func setUpWithError() throws {
        try super.setUpWithError()
        let opensslPath = try openssl()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/timeout") else {
            throw XCTSkip("coreutils timeout not found: the import tests need it to bound every run")
        }
        pki = try TLSTestPKI.shared(openssl: opensslPath)
        let served = workDirectory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: pki.path("alice.p12"), toPath: served.appendingPathComponent("alice.p12").path)
        server = try TLSTestServer(
            openssl: opensslPath,
            arguments: [
                "-cert", pki.path("srv.pem"), "-cert_chain", pki.path("int.pem"),
                "-key", pki.path("srv.key"), "-WWW"
            ],
            directory: served.path)
    }

    override func tearDownWithError() throws {
        server?.stop()
        try super.tearDownWithError()
    }

    private func importURL(_ options: [String]) throws -> Result {
        let url = "https://127.0.0.1:\(server!.port)/alice.p12"
        let result = try runProcess(
            "/usr/bin/timeout",
            [
                "-k", "5", "60", Self.binary.path, "identity", "import", url,
                "--passin", "pass:alicepass"
            ] + options)
        XCTAssertNotEqual(result.status, 124, "rsakit identity import hung: \(result.stderr)")
        return result
    }

    func testImportHTTPS_WithAnchor_StoresTheIdentity_NothingOnDisk_ReplaceOnlyWhenAsked() throws {
        let anchored = ["--anchor", pki.path("ca.pem"), "--label", "alice"]
        let first = try importURL(anchored)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdoutText.contains("imported identity: alice\n"), first.stdoutText)
        XCTAssertTrue(try rsakitOK(["identity", "list"]).stdoutText.contains("alice"))
        // Only the served copy exists: nothing was downloaded to a file.
        let p12s = FileManager.default.enumerator(atPath: workDirectory.path)!.compactMap { $0 as? String }.filter {
            $0.hasSuffix(".p12")
        }
        XCTAssertEqual(p12s, ["www/alice.p12"])

        let again = try importURL(anchored)
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.stderr.contains("--replace"), again.stderr)
        let replaced = try importURL(anchored + ["--replace"])
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
    }

    func testImportHTTPS_ServerNotTrustedByTheSystemRoots_StoresNothing() throws {
        let result = try importURL(["--label", "alice"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.hasPrefix("rsakit: error:"), result.stderr)
        XCTAssertTrue(result.stderr.contains("trust"), result.stderr)
        XCTAssertEqual(result.stdoutText, "")
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: storeDirectory.path), "a store was created for a failed download")
    }

    func testImportHTTP_IsAUsageError() throws {
        let result = try rsakit([
            "identity", "import", "http://127.0.0.1:\(server!.port)/alice.p12", "--passin", "pass:alicepass"
        ])
        XCTAssertEqual(result.status, 64, result.stderr)
        XCTAssertTrue(result.stderr.contains("only https:// URLs"), result.stderr)
    }
}
