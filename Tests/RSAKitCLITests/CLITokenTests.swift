import Foundation
import XCTest
import RSAKitTestSupport

/// Keys on a PKCS#11 token, with SoftHSM2: a token directory per test
/// (SOFTHSM2_CONF points at a config in the test's folder, never the system's), initialised
/// with `softhsm2-util --init-token --free --label T --pin 1234 --so-pin 5678`. A missing
/// softhsm2 fails the test (scripts/install-deps.sh installs it), it does not skip.
final class CLITokenTests: CLITestCase {
    static let module = "/usr/lib/softhsm/libsofthsm2.so"
    private var environment: [String: String?] = [:]
    private var uri: String { "pkcs11:token=T?module-path=\(Self.module)" }
    private var tokenDirectory: String { path("tokens") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.fileExists(atPath: Self.module) else {
            XCTFail("\(Self.module) not found: scripts/install-deps.sh installs it (apt package softhsm2)")
            throw CocoaError(.fileNoSuchFile)
        }
        try FileManager.default.createDirectory(atPath: tokenDirectory, withIntermediateDirectories: true)
        let config = path("softhsm2.conf")
        try "directories.tokendir = \(tokenDirectory)\nobjectstore.backend = file\nlog.level = ERROR\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        environment = ["SOFTHSM2_CONF": config, "RSAKIT_TOKEN_PIN": nil, "RSAKIT_PASSIN": nil]
        let initialised = try runProcess(
            try tool("softhsm2-util"), ["--init-token", "--free", "--label", "T", "--pin", "1234", "--so-pin", "5678"],
            environment: environment)
        XCTAssertEqual(initialised.status, 0, initialised.stderr)
    }

    override func tearDownWithError() throws {
        for server in servers { server.stop() }
        servers = []
        try super.tearDownWithError()
    }

    private var servers: [TLSTestServer] = []

    private func tool(_ name: String) throws -> String {
        guard
            let found = [TestTools.path(of: name), "/usr/bin/\(name)"].compactMap({ $0 })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            XCTFail("\(name) not found: scripts/install-deps.sh installs it")
            throw CocoaError(.executableNotLoadable)
        }
        return found
    }

    @discardableResult
    private func token(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        try rsakitOK(arguments, environment: environment, file: file, line: line)
    }

    func testGenPairOnToken_ListShowEncryptDecryptSign() throws {
        let made = try token(["genpair", "--tag", "tk", "--token", uri, "--token-pin", "pass:1234"]).stdoutText
        XCTAssertTrue(made.contains("token: T (serial "), made)
        let list = try token(["list"]).stdoutText
        XCTAssertTrue(
            list.split(separator: "\n").contains { $0.hasPrefix("private") && $0.hasSuffix("tk  [token: T]") }, list)
        XCTAssertTrue(list.split(separator: "\n").contains { $0.hasPrefix("public") && $0.hasSuffix("tk") }, list)
        XCTAssertTrue(try token(["show", "--tag", "tk"]).stdoutText.contains("location: token T (serial "))
        let json = try token(["list", "--json"]).stdoutText
        XCTAssertTrue(json.contains("\"tokenLabel\":\"T\"") || json.contains("\"tokenLabel\" : \"T\""), json)
        // The item file holds no private key.
        let pem = try token(["export", "--tag", "tk"]).stdoutText
        XCTAssertTrue(pem.hasPrefix("-----BEGIN PUBLIC KEY-----"), pem)

        // Encrypt with rsakit's engine, decrypt on the token (container and raw blocks).
        let message = Array("a message for the token, longer than nothing\n".utf8)
        try Data(message).write(to: URL(fileURLWithPath: path("m")))
        try token(["encrypt", "--tag", "tk", "--in", path("m"), "--out", path("c")])
        XCTAssertEqual(
            try token(["decrypt", "--tag", "tk", "--in", path("c"), "--token-pin", "pass:1234"]).stdout, message)
        // Without --tag the store's lookup finds the recipient's item on a token and says how to reach it.
        assertFailure(
            try rsakit(["decrypt", "--in", path("c")], environment: environment), status: 66,
            contains: "is on a token, not in the store; sign and decrypt reach it with --tag tk")
        assertFailure(
            try rsakit(["export", "--tag", "tk", "--private"], environment: environment), status: 66,
            contains: "cannot be exported")
        // OAEP with SHA-1: SoftHSM 2.6 refuses other OAEP hashes (CKR_ARGUMENTS_BAD).
        try token([
            "encrypt", "--tag", "tk", "--raw", "--padding", "oaep", "--oaep-hash", "sha1", "--in", path("m"), "--out",
            path("r")
        ])
        var env = environment
        env["RSAKIT_TOKEN_PIN"] = "pass:1234"
        XCTAssertEqual(
            try rsakitOK(
                ["decrypt", "--tag", "tk", "--raw", "--padding", "oaep", "--oaep-hash", "sha1", "--in", path("r")],
                environment: env
            ).stdout, message)

        // Sign on the token; openssl verifies with the exported public key.
        try Data(pem.utf8).write(to: URL(fileURLWithPath: path("pub.pem")))
        try token(["sign", "--tag", "tk", "--in", path("m"), "--out", path("sig"), "--token-pin", "pass:1234"])
        let verified = try runProcess(
            try openssl(), ["dgst", "-sha256", "-verify", path("pub.pem"), "-signature", path("sig"), path("m")])
        XCTAssertEqual(verified.status, 0, verified.stderr)
        try token([
            "sign", "--tag", "tk", "--scheme", "pss", "--in", path("m"), "--out", path("pss"), "--token-pin",
            "pass:1234"
        ])
        try token(["verify", "--tag", "tk", "--scheme", "pss", "--in", path("m"), "--signature", path("pss")])

        // The private key is sensitive and never extractable, as pkcs11-tool reports it.
        let objects = try runProcess(
            try tool("pkcs11-tool"),
            [
                "--module", Self.module, "--token-label", "T", "--login", "--pin", "1234",
                "--list-objects", "--type", "privkey"
            ], environment: environment)
        XCTAssertEqual(objects.status, 0, objects.stderr)
        XCTAssertTrue(objects.stdoutText.contains("never extractable"), objects.stdoutText)
        XCTAssertTrue(objects.stdoutText.contains("sensitive"), objects.stdoutText)
    }

    func testImportToToken_DecryptsOpenSSLCiphertext() throws {
        let openssl = try openssl()
        XCTAssertEqual(try runProcess(openssl, ["genrsa", "-out", path("k.pem"), "2048"]).status, 0)
        XCTAssertEqual(
            try runProcess(openssl, ["rsa", "-in", path("k.pem"), "-pubout", "-out", path("k.pub")]).status, 0)
        try Data("imported secret\n".utf8).write(to: URL(fileURLWithPath: path("m")))
        XCTAssertEqual(
            try runProcess(
                openssl, ["pkeyutl", "-encrypt", "-pubin", "-inkey", path("k.pub"), "-in", path("m"), "-out", path("c")]
            ).status, 0)
        let imported = try token(["import", "--tag", "imp", "--token", uri, "--token-pin", "pass:1234", path("k.pem")])
            .stdoutText
        XCTAssertTrue(imported.contains("imported key pair to token T"), imported)
        XCTAssertTrue(try token(["list"]).stdoutText.contains("imp  [token: T]"))
        XCTAssertEqual(
            try token(["decrypt", "--tag", "imp", "--raw", "--in", path("c"), "--token-pin", "pass:1234"]).stdoutText,
            "imported secret\n")
    }

    func testWrongPIN_ClearErrorStoreUnchanged() throws {
        try token(["genpair", "--tag", "tk", "--token", uri, "--token-pin", "pass:1234"])
        try Data("m".utf8).write(to: URL(fileURLWithPath: path("m")))
        try token(["encrypt", "--tag", "tk", "--in", path("m"), "--out", path("c")])
        let before = try storeSnapshot()
        assertFailure(
            try rsakit(
                ["decrypt", "--tag", "tk", "--in", path("c"), "--token-pin", "pass:0000"], environment: environment),
            status: 65, contains: "wrong token PIN")
        assertFailure(
            try rsakit(
                ["genpair", "--tag", "tk2", "--token", uri, "--token-pin", "pass:0000"], environment: environment),
            status: 65, contains: "wrong token PIN")
        assertFailure(
            try rsakit(
                ["sign", "--tag", "tk", "--in", path("m"), "--token-pin", "pass:0000"], environment: environment),
            status: 65, contains: "wrong token PIN")
        XCTAssertEqual(try storeSnapshot(), before)
    }

    func testTokenRemoved_ClearErrorStoreUnchanged() throws {
        try token(["genpair", "--tag", "tk", "--token", uri, "--token-pin", "pass:1234"])
        try Data("m".utf8).write(to: URL(fileURLWithPath: path("m")))
        try token(["encrypt", "--tag", "tk", "--in", path("m"), "--out", path("c")])
        let before = try storeSnapshot()
        try FileManager.default.removeItem(atPath: tokenDirectory)
        assertFailure(
            try rsakit(
                ["decrypt", "--tag", "tk", "--in", path("c"), "--token-pin", "pass:1234"], environment: environment),
            status: 66, contains: "token unavailable")
        assertFailure(
            try rsakit(
                ["sign", "--tag", "tk", "--in", path("m"), "--token-pin", "pass:1234"], environment: environment),
            status: 66, contains: "token unavailable")
        assertFailure(
            try rsakit(
                ["genpair", "--tag", "tk2", "--token", uri, "--token-pin", "pass:1234"], environment: environment),
            status: 66, contains: "token unavailable")
        XCTAssertEqual(try storeSnapshot(), before)
        // A token with another label: named in the error.
        try FileManager.default.createDirectory(atPath: tokenDirectory, withIntermediateDirectories: true)
        assertFailure(
            try rsakit(
                [
                    "genpair", "--tag", "tk3", "--token", "pkcs11:token=Nope?module-path=\(Self.module)", "--token-pin",
                    "pass:1234"
                ],
                environment: environment),
            status: 66, contains: "no token labelled 'Nope'")
        XCTAssertEqual(try storeSnapshot(), before)
    }

    func testProtectedStore_TokenItemsStayReferences() throws {
        try token(["genpair", "--tag", "tk", "--token", uri, "--token-pin", "pass:1234"])
        try token(["store", "protect", "--store-passin", "pass:storepw", "--kdf", "interactive"])
        try Data("m\n".utf8).write(to: URL(fileURLWithPath: path("m")))
        try token(["encrypt", "--tag", "tk", "--in", path("m"), "--out", path("c")])
        // The token key needs the PIN, not the store passphrase.
        XCTAssertEqual(
            try token(["decrypt", "--tag", "tk", "--in", path("c"), "--token-pin", "pass:1234"]).stdoutText, "m\n")
        try token(["store", "unprotect", "--store-passin", "pass:storepw"])
        XCTAssertTrue(try token(["list"]).stdoutText.contains("tk  [token: T]"))
        XCTAssertEqual(
            try token(["decrypt", "--tag", "tk", "--in", path("c"), "--token-pin", "pass:1234"]).stdoutText, "m\n")
    }

    // MARK: tls connect with a token key

    /// A key generated on the token, its public half certified by the TLS test CA
    /// (``TLSTestPKI/issueClientCertificate(openssl:publicKey:subject:serial:output:)``,
    /// `openssl x509 -new -force_pubkey`), the certificate added to the store
    /// with label `token-client`. Returns the PKI and the openssl path.
    private func tokenIdentity() throws -> (TLSTestPKI, String) {
        let openssl = try openssl()
        let pki = try TLSTestPKI.shared(openssl: openssl)
        try token(["genpair", "--tag", "tk", "--token", uri, "--token-pin", "pass:1234"])
        try token(["export", "--tag", "tk", "--out", path("tk.pub")])
        try pki.issueClientCertificate(
            openssl: openssl, publicKey: path("tk.pub"), subject: "/CN=token-client", serial: 88, output: path("tk.pem")
        )
        try token(["cert", "add", path("tk.pem"), "--label", "token-client"])
        return (pki, openssl)
    }

    /// The test CA's mutual-TLS server (``startMutualTLSServer(_:openssl:extra:)``), stopped in tearDown.
    private func startServer(_ pki: TLSTestPKI, openssl: String, extra: [String] = []) throws -> TLSTestServer {
        let server = try startMutualTLSServer(pki, openssl: openssl, extra: extra)
        servers.append(server)
        return server
    }

    /// ``connectTLS(_:_:environment:)``, failing the test when `timeout` had to end it.
    private func connect(_ server: TLSTestServer, _ options: [String], environment: [String: String?]) throws -> Result
    {
        let result = try connectTLS(server, options, environment: environment)
        XCTAssertNotEqual(result.status, 124, "rsakit tls connect hung: \(result.stderr)")
        return result
    }

    func testTLSConnect_TokenKey_ServerSawTheClientCertificate() throws {
        let (pki, openssl) = try tokenIdentity()
        let server = try startServer(pki, openssl: openssl)
        for (flag, version) in [("--tls1.2", "TLSv1.2"), ("--tls1.3", "TLSv1.3")] {
            let result = try connect(
                server, ["--tag", "tk", "--anchor", pki.path("ca.pem"), flag, "-v", "--token-pin", "pass:1234"],
                environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
            // s_server -www describes the session: the client certificate it verified and its signature.
            TLSTestPKI.assertServerSawClientCertificate(result.stdoutText, version: version, subject: "CN=token-client")
            XCTAssertTrue(result.stderr.contains("client identity: tk (CN=token-client), sent"), result.stderr)
            XCTAssertTrue(
                result.stderr.contains("client signature: RSA-PSS-RSAE-SHA256, by token T (rsa_pss_rsae_sha256)"),
                result.stderr)
        }
        // By the certificate's label, the PIN from RSAKIT_TOKEN_PIN.
        var env = environment
        env["RSAKIT_TOKEN_PIN"] = "pass:1234"
        let byLabel = try connect(
            server, ["--identity", "token-client", "--anchor", pki.path("ca.pem"), "-v"], environment: env)
        XCTAssertEqual(byLabel.status, 0, byLabel.stderr)
        XCTAssertTrue(byLabel.stdoutText.contains("Subject: CN=token-client"), byLabel.stdoutText)
        XCTAssertTrue(byLabel.stderr.contains("by token T"), byLabel.stderr)
    }

    func testTLSConnect_TokenKey_TLS12PKCS1SignsTheDigestInfoOnTheToken() throws {
        let (pki, openssl) = try tokenIdentity()
        // -client_sigalgs limits what the server accepts in the client's CertificateVerify.
        let server = try startServer(pki, openssl: openssl, extra: ["-client_sigalgs", "RSA+SHA384"])
        let result = try connect(
            server, ["--tag", "tk", "--anchor", pki.path("ca.pem"), "--tls1.2", "-v", "--token-pin", "pass:1234"],
            environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdoutText.contains("Subject: CN=token-client"), result.stdoutText)
        XCTAssertTrue(result.stdoutText.contains("Peer signature type: RSA\n"), result.stdoutText)
        XCTAssertTrue(result.stdoutText.contains("Peer signing digest: SHA384"), result.stdoutText)
        // DigestInfo for SHA-384: 19-byte prefix + 48-byte hash, padded and signed by CKM_RSA_PKCS.
        XCTAssertTrue(
            result.stderr.contains("client signature: RSA-SHA384, by token T (rsa_pkcs1 (DigestInfo, 67 bytes))"),
            result.stderr)
    }

    func testTLSConnect_TokenKey_WrongPINAndRemovedTokenAreClearErrorsStoreUnchanged() throws {
        let (pki, openssl) = try tokenIdentity()
        let server = try startServer(pki, openssl: openssl)
        let before = try storeSnapshot()
        // The login comes before the handshake: no client certificate reaches the server.
        let wrong = try connect(
            server, ["--tag", "tk", "--anchor", pki.path("ca.pem"), "--token-pin", "pass:0000"],
            environment: environment)
        assertFailure(wrong, status: 65, contains: "wrong token PIN")
        XCTAssertEqual(wrong.stdout, [])
        XCTAssertFalse(server.log.contains("CN = token-client"), server.log)
        // Standard input is the data for the server, so it cannot carry the PIN.
        assertFailure(
            try connect(
                server, ["--tag", "tk", "--anchor", pki.path("ca.pem"), "--token-pin", "stdin"],
                environment: environment),
            status: 64, contains: "--token-pin stdin cannot be used here")
        try FileManager.default.removeItem(atPath: tokenDirectory)
        let removed = try connect(
            server, ["--tag", "tk", "--anchor", pki.path("ca.pem"), "--token-pin", "pass:1234"],
            environment: environment)
        assertFailure(removed, status: 66, contains: "token unavailable")
        XCTAssertEqual(removed.stdout, [])
        XCTAssertEqual(try storeSnapshot(), before)
    }
}
