import Foundation
import XCTest
import RSAKitTestSupport

/// `rsakit tls connect` against a real `openssl s_server` on 127.0.0.1 (a free port, killed
/// at the end of each test). Every rsakit run is bounded by coreutils `timeout` (60 s) and
/// by its own `--timeout`, so nothing can hang the suite.
final class CLITLSTests: CLITestCase {
    private var pki: TLSTestPKI!
    private var opensslPath = ""
    private var servers: [TLSTestServer] = []
    private let request = Array("GET / HTTP/1.0\r\n\r\n".utf8)
    private let marker = "RSAKIT-MARKER-must-not-reach-an-untrusted-server"

    override func setUpWithError() throws {
        try super.setUpWithError()
        opensslPath = try openssl()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/timeout") else {
            throw XCTSkip("coreutils timeout not found: the TLS tests need it to bound every run")
        }
        pki = try TLSTestPKI.shared(openssl: opensslPath)
    }

    override func tearDownWithError() throws {
        for server in servers { server.stop() }
        servers = []
        try super.tearDownWithError()
    }

    /// s_server requiring a client certificate from the test root; `-www` unless `echo`
    /// (then it prints the application data it receives to its log).
    private func startServer(echo: Bool = false, extra: [String] = []) throws -> TLSTestServer {
        let arguments =
            [
                "-Verify", "5", "-verify_return_error", "-CAfile", pki.path("ca.pem"),
                "-cert", pki.path("srv.pem"), "-cert_chain", pki.path("int.pem"), "-key", pki.path("srv.key")
            ]
            + (echo ? [] : ["-www"]) + extra
        let server = try TLSTestServer(openssl: opensslPath, arguments: arguments, directory: workDirectory.path)
        servers.append(server)
        return server
    }

    /// rsakit under `timeout -k 5 60`.
    private func bounded(_ arguments: [String], stdin: [UInt8]? = nil) throws -> Result {
        let result = try runProcess("/usr/bin/timeout", ["-k", "5", "60", Self.binary.path] + arguments, stdin: stdin)
        XCTAssertNotEqual(result.status, 124, "rsakit \(arguments.joined(separator: " ")) hung: \(result.stderr)")
        return result
    }

    private func connect(_ server: TLSTestServer, _ options: [String], stdin: [UInt8]? = nil) throws -> Result {
        try bounded(
            ["tls", "connect", "127.0.0.1:\(server.port)", "--timeout", "20"] + options, stdin: stdin ?? request)
    }

    /// alice's p12 (made by openssl pkcs12 -export) imported with identity import.
    private func importAlice() throws {
        try rsakitOK(["identity", "import", pki.path("alice.p12"), "--label", "alice", "--passin", "pass:alicepass"])
    }

    // MARK: Handshakes

    func testConnect_TLS12AndTLS13WithStoredIdentity_ServerSawTheClientCertificate() throws {
        try importAlice()
        let server = try startServer()
        for (flag, version) in [("--tls1.2", "TLSv1.2"), ("--tls1.3", "TLSv1.3")] {
            let result = try connect(server, ["--identity", "alice", "--anchor", pki.path("ca.pem"), flag, "-v"])
            XCTAssertEqual(result.status, 0, result.stderr)
            // s_server -www prints the client certificate it verified, and how it was signed.
            TLSTestPKI.assertServerSawClientCertificate(
                result.stdoutText, version: version, subject: "CN=alice, O=RSAKit Tests")
            let protocolName = version.replacingOccurrences(of: "v", with: "")
            XCTAssertTrue(
                result.stderr.contains("rsakit: connected to 127.0.0.1:\(server.port): \(protocolName), TLS_"),
                result.stderr)
            XCTAssertTrue(
                result.stderr.contains("rsakit: server: CN=localhost (issuer: CN=RSAKit TLS Test Intermediate)"),
                result.stderr)
            XCTAssertTrue(
                result.stderr.contains(
                    "server trust: unspecified for \"127.0.0.1\" (ssl-server policy), anchor: RSAKit TLS Test Root"),
                result.stderr)
            XCTAssertTrue(
                result.stderr.contains("client identity: alice (O=RSAKit Tests,CN=alice), sent"), result.stderr)
            XCTAssertTrue(
                result.stderr.contains(
                    "client signature: RSA-PSS-RSAE-SHA256, by rsakit's engine (rsa_pss_rsae_sha256)"), result.stderr)
        }
    }

    func testConnect_ALPN_VerbosePrintsTheProtocolTheServerSelected() throws {
        try importAlice()
        let server = try startServer(extra: ["-alpn", "http/1.1,h2"])
        let base = ["--identity", "alice", "--anchor", pki.path("ca.pem"), "-v"]
        let offered = try connect(server, base + ["--alpn", "h2,http/1.1"])
        XCTAssertEqual(offered.status, 0, offered.stderr)
        XCTAssertTrue(offered.stderr.contains("rsakit: ALPN: http/1.1 (offered h2,http/1.1)\n"), offered.stderr)
        let h2 = try connect(server, base + ["--alpn", "h2"])
        XCTAssertEqual(h2.status, 0, h2.stderr)
        XCTAssertTrue(h2.stderr.contains("rsakit: ALPN: h2 (offered h2)\n"), h2.stderr)
        let bad = try rsakit(["tls", "connect", "127.0.0.1:\(server.port)", "--alpn", "h2,,http/1.1"])
        XCTAssertEqual(bad.status, 64, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("--alpn expects comma-separated protocol names"), bad.stderr)
    }

    /// An identity whose key and certificate are id-RSASSA-PSS: GnuTLS is told the key is
    /// RSA-PSS, so the handshake signs rsa_pss_pss_sha256 (RFC 8446 §4.2.3), with rsakit's engine.
    func testConnect_RSAPSSIdentity_SignsRSAPSSPSS() throws {
        let key = path("pss.key"), certificate = path("pss.pem"), p12 = path("pss.p12")
        for arguments in [
            [
                "genpkey", "-algorithm", "RSA-PSS", "-pkeyopt", "rsa_keygen_bits:2048", "-pkeyopt",
                "rsa_pss_keygen_md:sha256",
                "-pkeyopt", "rsa_pss_keygen_mgf1_md:sha256", "-pkeyopt", "rsa_pss_keygen_saltlen:32", "-out", key
            ],
            ["req", "-x509", "-key", key, "-subj", "/CN=pss-client", "-days", "30", "-out", certificate],
            ["pkcs12", "-export", "-inkey", key, "-in", certificate, "-passout", "pass:pw", "-out", p12]
        ] {
            let run = try runProcess(opensslPath, arguments)
            XCTAssertEqual(run.status, 0, run.stderr)
        }
        try rsakitOK(["identity", "import", p12, "--passin", "pass:pw"])
        let arguments = [
            "-Verify", "5", "-verify_return_error", "-CAfile", certificate,
            "-cert", pki.path("srv.pem"), "-cert_chain", pki.path("int.pem"), "-key", pki.path("srv.key"), "-www"
        ]
        let server = try TLSTestServer(openssl: opensslPath, arguments: arguments, directory: workDirectory.path)
        servers.append(server)
        for flag in ["--tls1.2", "--tls1.3"] {
            let result = try connect(server, ["--identity", "pss-client", "--anchor", pki.path("ca.pem"), flag, "-v"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stdoutText.contains("Subject: CN=pss-client"), result.stdoutText)
            XCTAssertTrue(result.stdoutText.contains("Peer signature type: RSA-PSS"), result.stdoutText)
            XCTAssertTrue(
                result.stderr.contains("client signature: RSA-PSS-SHA256, by rsakit's engine (rsa_pss_pss_sha256)"),
                result.stderr)
        }
    }

    func testConnect_TLS12ServerAskingPKCS1_SignsTheDigestInfoWithRSAKit() throws {
        try importAlice()
        // -client_sigalgs limits what the server accepts in the client's CertificateVerify.
        let server = try startServer(extra: ["-client_sigalgs", "RSA+SHA384"])
        let result = try connect(server, ["--identity", "alice", "--anchor", pki.path("ca.pem"), "--tls1.2", "-v"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdoutText.contains("Peer signature type: RSA\n"), result.stdoutText)
        XCTAssertTrue(result.stdoutText.contains("Peer signing digest: SHA384"), result.stdoutText)
        // DigestInfo for SHA-384: 19-byte prefix + 48-byte hash (RFC 8017 §9.2 note 1).
        XCTAssertTrue(
            result.stderr.contains(
                "client signature: RSA-SHA384, by rsakit's engine (rsa_pkcs1 (DigestInfo, 67 bytes))"), result.stderr)
    }

    func testConnect_KeyGeneratedInTheStore_ExistsNowhereElse() throws {
        // The private key is made by rsakit in the store and never exported; the CA signs its
        // public key (openssl x509 -new -force_pubkey), so only rsakit can sign for it.
        try rsakitOK(["genpair", "--tag", "carol"])
        try rsakitOK(["export", "--tag", "carol", "--out", path("carol.pub")])
        try pki.issueClientCertificate(
            openssl: opensslPath, publicKey: path("carol.pub"), subject: "/CN=carol", serial: 77,
            output: path("carol.pem"))
        try rsakitOK(["cert", "add", path("carol.pem"), "--label", "carol"])
        let server = try startServer()
        for flag in ["--tls1.2", "--tls1.3"] {
            let result = try connect(server, ["--tag", "carol", "--anchor", pki.path("ca.pem"), flag, "-v"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stdoutText.contains("Subject: CN=carol"), result.stdoutText)
            XCTAssertTrue(result.stderr.contains("by rsakit's engine"), result.stderr)
        }
    }

    func testConnect_ProtectedStore_PassphraseOnceAndWrongPassphraseIs65() throws {
        try importAlice()
        try rsakitOK(["store", "protect", "--kdf", "interactive", "--passin", "pass:hunter2"])
        let server = try startServer()
        let good = try connect(
            server, ["--identity", "alice", "--anchor", pki.path("ca.pem"), "--passin", "pass:hunter2"])
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(good.stdoutText.contains("Subject: CN=alice"), good.stdoutText)
        let wrong = try connect(
            server, ["--identity", "alice", "--anchor", pki.path("ca.pem"), "--passin", "pass:wrong"])
        assertFailure(wrong, status: 65, contains: "wrong passphrase")
        XCTAssertTrue(wrong.stdout.isEmpty)
    }

    func testConnect_TrustedCertificateInTheStore_PinsTheServer() throws {
        // The seeds' pinning: the app's own anchor, here `cert add --trust`, and only it.
        try importAlice()
        try rsakitOK(["cert", "add", pki.path("ca.pem"), "--label", "pinned root", "--trust"])
        let server = try startServer()
        let result = try connect(server, ["--identity", "alice", "--anchors-only", "-v"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("server trust: proceed"), result.stderr)
        XCTAssertTrue(result.stdoutText.contains("Subject: CN=alice"))
    }

    // MARK: Client authentication refused

    func testConnect_WithoutIdentity_ReportsTheCertificateRequirement() throws {
        let server = try startServer()
        for flag in ["--tls1.2", "--tls1.3"] {
            let result = try connect(server, ["--anchor", pki.path("ca.pem"), flag])
            assertFailure(result, status: 65, contains: "the server requires a client certificate and none was given")
            XCTAssertTrue(result.stdout.isEmpty)
        }
    }

    func testConnect_IdentityFromAnotherCA_ReportsTheRejection() throws {
        try rsakitOK(["import", "--tag", "bob", pki.path("bob.key")])
        try rsakitOK(["cert", "add", pki.path("bob.pem"), "--label", "bob"])
        let server = try startServer()
        for flag in ["--tls1.2", "--tls1.3"] {
            // TLS 1.3: the handshake completes on the client; the alert comes on the first read.
            let result = try connect(server, ["--identity", "bob", "--anchor", pki.path("ca.pem"), flag])
            assertFailure(result, status: 65, contains: "the server rejected the client certificate (alert: ")
            XCTAssertTrue(result.stdout.isEmpty)
        }
        XCTAssertTrue(server.log.contains("depth=0 CN = bob"), server.log)
    }

    // MARK: Server trust

    /// Connect to an echo-mode server with `options` and the marker as input; returns the
    /// result and the server log once the client's alert arrived.
    private func refusedConnection(_ options: [String]) throws -> (Result, String) {
        try importAlice()
        let server = try startServer(echo: true)
        let result = try connect(server, ["--identity", "alice"] + options, stdin: Array((marker + "\n").utf8))
        _ = server.waitForLog("alert", seconds: 5)
        return (result, server.log)
    }

    func testConnect_ServerCertificateForAnotherHost_RefusedBeforeAnythingIsSent() throws {
        let (result, log) = try refusedConnection(["--servername", "other.example", "--anchor", pki.path("ca.pem")])
        assertFailure(
            result, status: 65,
            contains:
                "the server's certificate is not trusted (recoverable-trust-failure): certificate 0 (localhost): not "
                + "valid for the hostname \"other.example\""
        )
        XCTAssertFalse(log.contains(marker), log)
        XCTAssertFalse(log.contains("CN = alice"), "the client certificate was sent: \(log)")
        XCTAssertTrue(log.contains("alert bad certificate"), log)
    }

    func testConnect_ServerFromAnUnknownCA_RefusedBeforeAnythingIsSent() throws {
        let (result, log) = try refusedConnection(["--anchor", pki.path("other.pem"), "--anchors-only"])
        assertFailure(
            result, status: 65,
            contains:
                "certificate 1 (RSAKit TLS Test Intermediate): issuer \"CN=RSAKit TLS Test Root\" not found among "
                + "the certificates and anchors"
        )
        XCTAssertFalse(log.contains(marker), log)
        XCTAssertFalse(log.contains("CN = alice"), log)
        XCTAssertTrue(log.contains("alert unknown ca"), log)
    }

    /// `--access-group`: the identity is looked for in that group only.
    func testConnect_AccessGroup_TakesTheIdentityFromThatGroupOnly() throws {
        try rsakitOK([
            "identity", "import", pki.path("alice.p12"), "--label", "alice", "--passin", "pass:alicepass",
            "--access-group", "com.example.client"
        ])
        let server = try startServer()
        assertFailure(
            try connect(
                server, ["--identity", "alice", "--anchor", pki.path("ca.pem"), "--access-group", "com.example.other"]),
            status: 66, contains: "alice")
        let result = try connect(
            server,
            ["--identity", "alice", "--anchor", pki.path("ca.pem"), "--access-group", "com.example.client", "-v"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("client identity: alice (O=RSAKit Tests,CN=alice), sent"), result.stderr)
    }

    func testConnect_TrustedEchoServer_ReceivesTheInput() throws {
        // The control for the two tests above: with a trusted server the same input arrives
        // (and the client certificate is verified); the echo server never closes, so the
        // client gives up after --timeout once its input ended (exit 1).
        try importAlice()
        let server = try startServer(echo: true)
        let result = try bounded(
            [
                "tls", "connect", "127.0.0.1:\(server.port)", "--identity", "alice",
                "--anchor", pki.path("ca.pem"), "--timeout", "2"
            ], stdin: Array((marker + "\n").utf8))
        XCTAssertTrue(server.waitForLog(marker), server.log)
        XCTAssertTrue(server.log.contains("CN = alice"), server.log)
        assertFailure(result, status: 1, contains: "timed out after 2 s: waiting for 127.0.0.1 after the input ended")
    }

    // MARK: curl with the exported identity

    func testCurl_WithIdentityExportedAsPEMAndP12_AuthenticatesToTheSameServer() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else {
            throw XCTSkip("curl not found at /usr/bin/curl: curl interop skipped")
        }
        try importAlice()
        try rsakitOK(["identity", "export", "--label", "alice", "--format", "pem", "--out", path("alice-export.pem")])
        try rsakitOK([
            "identity", "export", "--label", "alice", "--format", "p12", "--passout", "pass:exportpass",
            "--out", path("alice-export.p12")
        ])
        let server = try startServer()
        let url = "https://127.0.0.1:\(server.port)/"
        let common = ["--silent", "--show-error", "--max-time", "20", "--cacert", pki.path("ca.pem")]
        let pem = try runProcess(
            "/usr/bin/curl", common + ["--cert", path("alice-export.pem"), "--key", path("alice-export.pem"), url])
        XCTAssertEqual(pem.status, 0, pem.stderr)
        XCTAssertTrue(pem.stdoutText.contains("Subject: CN=alice, O=RSAKit Tests"), pem.stdoutText)
        let p12 = try runProcess(
            "/usr/bin/curl", common + ["--cert", path("alice-export.p12") + ":exportpass", "--cert-type", "P12", url])
        XCTAssertEqual(p12.status, 0, p12.stderr)
        XCTAssertTrue(p12.stdoutText.contains("Subject: CN=alice, O=RSAKit Tests"), p12.stdoutText)
        // Without a client certificate the same server refuses curl: the check above is real.
        let none = try runProcess("/usr/bin/curl", common + [url])
        XCTAssertNotEqual(none.status, 0)
    }

    // MARK: Errors and usage

    func testConnect_UnknownIdentityIs66_RefusedConnectionIs1() throws {
        let server = try startServer()
        // No store at all: reported, not created.
        let noStore = try connect(server, ["--identity", "nobody", "--anchor", pki.path("ca.pem")])
        assertFailure(noStore, status: 66, contains: "no key store at")
        XCTAssertFalse(exists("store"))
        // A certificate without its key, and a key without a certificate, are no identities.
        try rsakitOK(["cert", "add", pki.path("bob.pem"), "--label", "bob"])
        let unknown = try connect(server, ["--identity", "nobody", "--anchor", pki.path("ca.pem")])
        assertFailure(unknown, status: 66, contains: "no identity with label \"nobody\" found")
        let unknownTag = try connect(server, ["--tag", "nobody", "--anchor", pki.path("ca.pem")])
        XCTAssertEqual(unknownTag.status, 66, unknownTag.stderr)
        let certificateOnly = try connect(server, ["--identity", "bob", "--anchor", pki.path("ca.pem")])
        assertFailure(certificateOnly, status: 66, contains: "(the certificate is stored, but no private key for it)")
        try rsakitOK(["import", "--tag", "alice-key", pki.path("alice.key")])
        let keyOnly = try connect(server, ["--tag", "alice-key", "--anchor", pki.path("ca.pem")])
        assertFailure(keyOnly, status: 66, contains: "no certificate for the private key with tag \"alice-key\"")
        let port = try TLSTestServer.freePort()
        let refused = try bounded(
            ["tls", "connect", "127.0.0.1:\(port)", "--anchor", pki.path("ca.pem"), "--timeout", "5"], stdin: [])
        assertFailure(refused, status: 1, contains: "cannot connect to 127.0.0.1:\(port): connection refused")
    }

    func testConnect_UsageErrorsAre64() throws {
        for arguments in [
            ["tls"], ["tls", "listen", "127.0.0.1:1"], ["tls", "connect"], ["tls", "connect", "nohostport"],
            ["tls", "connect", "127.0.0.1:0"], ["tls", "connect", "127.0.0.1:1", "--tls1.2", "--tls1.3"],
            ["tls", "connect", "127.0.0.1:1", "--identity", "a", "--tag", "b"],
            ["tls", "connect", "127.0.0.1:1", "--timeout", "-3"],
            ["tls", "connect", "127.0.0.1:1", "--identity", "a", "--passin", "stdin"],
            ["tls", "connect", "127.0.0.1:1", "--identity", "a", "--store-passin", "stdin"]
        ] {
            let result = try bounded(arguments, stdin: [])
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("rsakit: error: "), result.stderr)
        }
        XCTAssertTrue(try rsakitOK(["help", "tls"]).stdoutText.contains("rsakit tls connect <HOST:PORT>"))
    }

    /// A plain HTTP port is named as such, not with GnuTLS's "an unexpected tls
    /// packet was received". The server is Python's http.server on 127.0.0.1.
    func testConnect_PlainHTTPPort_SaysThePeerDidNotAnswerInTLS() throws {
        let port = try TLSTestServer.freePort()
        let server = try ChildProcess.start(
            ["/usr/bin/env", "python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", String(port)],
            directory: workDirectory.path)
        guard server.waitForStdout(startingWith: "Serving HTTP", timeout: 20) else {
            throw XCTSkip("python3 -m http.server did not start: \(server.stdoutSoFar)")
        }
        let result = try bounded(
            ["tls", "connect", "127.0.0.1:\(port)", "--anchor", pki.path("ca.pem"), "--timeout", "10"], stdin: [])
        assertFailure(result, status: 65, contains: "the peer did not answer in TLS")
        XCTAssertFalse(result.stderr.contains("unexpected tls packet"), result.stderr)
    }

    /// IPv6 peers are printed as [::1]:PORT.
    func testConnect_IPv6Peer_IsPrintedInBrackets() throws {
        let port = try TLSTestServer.freePort()
        let refused = try bounded(
            ["tls", "connect", "[::1]:\(port)", "--anchor", pki.path("ca.pem"), "--timeout", "5"], stdin: [])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.hasPrefix("rsakit: error: cannot connect to [::1]:\(port): "), refused.stderr)
    }
}
