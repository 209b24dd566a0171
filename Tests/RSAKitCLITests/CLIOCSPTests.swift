import Foundation
import XCTest
import RSAKitTestSupport

/// `trust evaluate` and `tls connect` with OCSP through the built binary, against
/// real `openssl ocsp` responders on 127.0.0.1 and `openssl s_server` (OCSPTestPKI, commands
/// beside it): good, revoked, unknown, a forged responder, --no-network, --require-revocation.
final class CLIOCSPTests: CLITestCase {
    private static let shared = OCSPTestPKI.ClassFixture()

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    private func fixture() throws -> (OCSPTestPKI, OCSPTestPKI.Responder) {
        _ = try openssl()
        return try Self.shared.get()
    }

    private func evaluate(_ pki: OCSPTestPKI, _ name: String, _ options: [String]) throws -> Result {
        try rsakit(
            ["trust", "evaluate", pki.path(name + ".pem"), "--anchor", pki.path("ca.pem"), "--anchors-only"] + options)
    }

    func testTrustEvaluate_OCSP_GoodRevokedUnknown() throws {
        let (pki, responder) = try fixture()
        let good = try evaluate(pki, "good", ["--revocation", "ocsp"])
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(
            good.stdoutText.contains("revocation:\n  0: good (OCSP response from \(responder.url), thisUpdate "),
            good.stdoutText)
        XCTAssertEqual(good.stderr, "")

        let revoked = try evaluate(pki, "revoked", ["--revocation", "ocsp"])
        XCTAssertEqual(revoked.status, 65)
        XCTAssertTrue(revoked.stdoutText.hasPrefix("result: fatal-trust-failure\n"), revoked.stdoutText)
        XCTAssertTrue(
            revoked.stdoutText.contains(", revoked 2024-01-01T00:00:00Z, reason keyCompromise\n"), revoked.stdoutText)
        XCTAssertTrue(
            revoked.stdoutText.contains("certificate 0 (revoked.ocsp.test): revoked on 2024-01-01T00:00:00Z"),
            revoked.stdoutText)
        let json = try evaluate(pki, "revoked", ["--revocation", "ocsp", "--json"])
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
        let check = try XCTUnwrap((object["revocation"] as? [[String: Any]])?.first)
        XCTAssertEqual(check["status"] as? String, "revoked")
        XCTAssertEqual(check["revocationDate"] as? String, "2024-01-01T00:00:00.000Z")
        XCTAssertEqual(check["revocationReason"] as? Int, 1)
        XCTAssertEqual(check["revocationReasonName"] as? String, "keyCompromise")
        XCTAssertEqual((object["failures"] as? [[String: Any]])?.first?["reason"] as? String, "revoked")

        let unknown = try evaluate(pki, "unknown", ["--revocation", "ocsp"])
        XCTAssertEqual(unknown.status, 0, "a warning only")
        XCTAssertTrue(
            unknown.stderr.hasPrefix(
                "rsakit: warning: revocation of certificate 0 (unknown.ocsp.test) not established: "), unknown.stderr)
        let strict = try evaluate(pki, "unknown", ["--revocation", "ocsp", "--require-revocation"])
        XCTAssertEqual(strict.status, 65)
        XCTAssertTrue(strict.stdoutText.hasPrefix("result: recoverable-trust-failure\n"), strict.stdoutText)
        XCTAssertTrue(strict.stdoutText.contains("revocation status could not be established: "), strict.stdoutText)

        // The default (crl) and off send no request: the revoked certificate passes without CRLs.
        XCTAssertEqual(try evaluate(pki, "revoked", []).status, 0)
        XCTAssertEqual(try evaluate(pki, "revoked", ["--revocation", "off"]).status, 0)
    }

    func testTrustEvaluate_OCSP_ForgedResponderNoNetworkAndUsage() throws {
        let (pki, _) = try fixture()
        let forged = try pki.startResponder(forged: true)
        defer { forged.stop() }
        let refused = try evaluate(
            pki, "revoked", ["--revocation", "ocsp", "--ocsp-url", forged.url, "--require-revocation"])
        XCTAssertEqual(refused.status, 65)
        XCTAssertTrue(
            refused.stdoutText.hasPrefix("result: recoverable-trust-failure\n"),
            "a forged 'revoked' is not believed: \(refused.stdoutText)")
        XCTAssertTrue(
            refused.stdoutText.contains("refused: the responder certificate is not issued by the certificate's issuer"),
            refused.stdoutText)

        let offline = try evaluate(pki, "revoked", ["--revocation", "ocsp", "--no-network"])
        XCTAssertEqual(offline.status, 0)
        XCTAssertTrue(
            offline.stdoutText.contains("  0: not-checked (OCSP not asked: network access is disabled)"),
            offline.stdoutText)
        XCTAssertTrue(
            offline.stderr.contains("rsakit: warning: revocation of certificate 0 (revoked.ocsp.test) not established"),
            offline.stderr)
        XCTAssertEqual(
            try evaluate(pki, "revoked", ["--revocation", "ocsp", "--no-network", "--require-revocation"]).status, 65)

        assertFailure(
            try evaluate(pki, "good", ["--revocation", "sometimes"]), status: 64,
            contains: "--revocation must be ocsp, crl, any or off")
        assertFailure(
            try evaluate(pki, "good", ["--ocsp-url", "ftp://x"]), status: 64,
            contains: "--ocsp-url must be an http or https URL")
    }

    func testTLSConnect_OCSP_RevokedServerRefused_GoodServerVerbose() throws {
        let (pki, _) = try fixture()
        let opensslPath = try openssl()
        for name in ["revoked", "good"] {
            // openssl s_server -accept 127.0.0.1:PORT -cert NAME.pem -key leaf.key -www
            let server = try TLSTestServer(
                openssl: opensslPath,
                arguments: ["-cert", pki.path(name + ".pem"), "-key", pki.path("leaf.key"), "-www"],
                directory: workDirectory.path)
            defer { server.stop() }
            let result = try runProcess(
                "/usr/bin/timeout",
                [
                    "-k", "5", "60", Self.binary.path, "tls", "connect", "127.0.0.1:\(server.port)",
                    "--servername", "\(name).ocsp.test", "--anchor", pki.path("ca.pem"), "--anchors-only",
                    "--revocation", "ocsp", "-v"
                ],
                stdin: Array("GET / HTTP/1.0\r\n\r\n".utf8))
            if name == "revoked" {
                XCTAssertEqual(result.status, 65, result.stderr)
                XCTAssertTrue(result.stderr.contains("revoked on 2024-01-01T00:00:00Z"), result.stderr)
            } else {
                XCTAssertEqual(result.status, 0, result.stderr)
                XCTAssertTrue(
                    result.stderr.contains("rsakit: revocation: certificate 0: good (OCSP response from "),
                    result.stderr)
            }
        }
    }

    /// Stapling (status_request): `openssl s_server -status_file` sends a response made by the
    /// responder; with --no-network rsakit checks it alone.
    func testTLSConnect_StapledResponse_CheckedWithoutNetwork() throws {
        let (pki, responder) = try fixture()
        let opensslPath = try openssl()
        for name in ["good", "revoked"] {
            // openssl ocsp -issuer ca.pem -cert NAME.pem -url URL -CAfile ca.pem -respout NAME.ocsp.der
            try OpenSSL.run([
                "ocsp", "-issuer", pki.path("ca.pem"), "-cert", pki.path(name + ".pem"), "-url", responder.url,
                "-CAfile", pki.path("ca.pem"), "-respout", pki.path(name + ".ocsp.der")
            ])
            // openssl s_server -accept 127.0.0.1:PORT -cert NAME.pem -key leaf.key -status_file NAME.ocsp.der -www
            let server = try TLSTestServer(
                openssl: opensslPath,
                arguments: [
                    "-cert", pki.path(name + ".pem"), "-key", pki.path("leaf.key"),
                    "-status_file", pki.path(name + ".ocsp.der"), "-www"
                ],
                directory: workDirectory.path)
            defer { server.stop() }
            for version in ["--tls1.2", "--tls1.3"] {
                let result = try runProcess(
                    "/usr/bin/timeout",
                    [
                        "-k", "5", "60", Self.binary.path, "tls", "connect", "127.0.0.1:\(server.port)",
                        "--servername", "\(name).ocsp.test", "--anchor", pki.path("ca.pem"), "--anchors-only",
                        "--revocation", "ocsp", "--no-network", "-v", version
                    ],
                    stdin: Array("GET / HTTP/1.0\r\n\r\n".utf8))
                if name == "revoked" {
                    XCTAssertEqual(result.status, 65, result.stderr)
                    XCTAssertTrue(
                        result.stderr.contains("revoked on 2024-01-01T00:00:00Z"), "\(version): \(result.stderr)")
                } else {
                    XCTAssertEqual(result.status, 0, result.stderr)
                    XCTAssertTrue(
                        result.stderr.contains(
                            "rsakit: revocation: certificate 0: good (stapled OCSP response, thisUpdate "),
                        "\(version): \(result.stderr)")
                }
            }
        }
    }

    /// With a store, trust evaluate caches the answer: with the responder gone and
    /// --no-network, the revoked certificate is still revoked.
    func testTrustEvaluate_OCSPAnswerCachedInTheStore() throws {
        let (pki, _) = try fixture()
        try rsakitOK(["cert", "add", pki.path("ca.pem"), "--label", "ocsp ca"])
        let responder = try pki.startResponder(signer: "responder", key: "leaf.key")
        let first = try evaluate(pki, "revoked", ["--revocation", "ocsp", "--ocsp-url", responder.url])
        XCTAssertEqual(first.status, 65)
        XCTAssertTrue(first.stdoutText.contains("  0: revoked (OCSP response from \(responder.url)"), first.stdoutText)
        responder.stop()
        let offline = try evaluate(pki, "revoked", ["--revocation", "ocsp", "--no-network"])
        XCTAssertEqual(offline.status, 65, offline.stderr)
        XCTAssertTrue(
            offline.stdoutText.contains("  0: revoked (cached OCSP response, thisUpdate "), offline.stdoutText)
    }

    /// --fetch-crls: the distribution point's CRL (served by python3's http.server) revokes.
    func testTrustEvaluate_FetchCRLs() throws {
        let (pki, _) = try fixture()
        let server = try pki.startCRLServer()
        defer { server.send(SIGTERM); _ = try? server.wait(timeout: 2) }
        XCTAssertEqual(try evaluate(pki, "revoked", ["--revocation", "crl"]).status, 0, "no fetching unless asked")
        let fetched = try evaluate(pki, "revoked", ["--revocation", "crl", "--fetch-crls"])
        XCTAssertEqual(fetched.status, 65, fetched.stderr)
        XCTAssertTrue(
            fetched.stdoutText.contains(", fetched from http://127.0.0.1:\(pki.crlPort)/ca.crl)"), fetched.stdoutText)
    }

    /// --fetch-issuers: aia-cer.pem's issuer, the sub CA, is fetched from its caIssuers URL
    /// (python3's http.server) and completes the chain; without the flag it is unknown.
    func testTrustEvaluate_FetchIssuers() throws {
        let (pki, _) = try fixture()
        let server = try pki.startCRLServer()
        defer { server.send(SIGTERM); _ = try? server.wait(timeout: 2) }
        let unfetched = try evaluate(pki, "aia-cer", ["--revocation", "off"])
        XCTAssertNotEqual(unfetched.status, 0, "no fetching unless asked")
        XCTAssertFalse(unfetched.stdoutText.contains("  1: RSAKit OCSP Sub CA (not after "), unfetched.stdoutText)
        let fetched = try evaluate(pki, "aia-cer", ["--revocation", "off", "--fetch-issuers"])
        XCTAssertEqual(fetched.status, 0, fetched.stderr)
        XCTAssertTrue(fetched.stdoutText.contains("  1: RSAKit OCSP Sub CA (not after "), fetched.stdoutText)
    }
}
