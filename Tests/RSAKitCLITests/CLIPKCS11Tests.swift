import Foundation
import XCTest
import RSAKitTestSupport

/// The PKCS#11 module `librsakit-pkcs11.so` driven by real clients, each
/// against a store made by the built `rsakit`: GnuTLS's p11tool and gnutls-cli (against
/// `openssl s_server -Verify`), OpenSC's pkcs11-tool (signatures and decryptions checked by
/// `openssl`), OpenSSH's ssh into a throw-away sshd. The module is built by
/// `swift build --product rsakit-pkcs11` (scripts/test.sh does it before `swift test`); a
/// missing module or tool fails the test (scripts/install-deps.sh installs the tools), it
/// does not skip.
///
/// The identity is alice's (TLSTestPKI: alice.p12 made by `openssl pkcs12 -export`), imported
/// with `rsakit identity import`.
final class CLIPKCS11Tests: CLITestCase {
    private var pki: TLSTestPKI!
    private var servers: [TLSTestServer] = []

    /// The built module, beside `rsakit`.
    static var module: String { productsDirectory.appendingPathComponent("librsakit-pkcs11.so").path }

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.fileExists(atPath: Self.module) else {
            XCTFail("\(Self.module) is not built: run `swift build --product rsakit-pkcs11` (scripts/test.sh does)")
            throw CocoaError(.fileNoSuchFile)
        }
        pki = try TLSTestPKI.shared(openssl: try openssl())
    }

    override func tearDownWithError() throws {
        servers.forEach { $0.stop() }
        try super.tearDownWithError()
    }

    private func tool(_ name: String, package: String) throws -> String { try requiredTool(name, package: package) }

    /// Run `command` under `timeout -k 5 60` with this test's store.
    private func run(_ command: [String], environment: [String: String?] = [:]) throws -> Result {
        let result = try runProcess("/usr/bin/timeout", ["-k", "5", "60"] + command, environment: environment)
        XCTAssertNotEqual(result.status, 124, "\(command.joined(separator: " ")) hung: \(result.stderr)")
        return result
    }

    private func runOK(
        _ command: [String], environment: [String: String?] = [:],
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> Result {
        let result = try run(command, environment: environment)
        XCTAssertEqual(
            result.status, 0, "\(command.joined(separator: " ")):\n\(result.stdoutText)\n\(result.stderr)", file: file,
            line: line)
        return result
    }

    private func importAlice() throws {
        try rsakitOK(["identity", "import", pki.path("alice.p12"), "--label", "alice", "--passin", "pass:alicepass"])
        try Data(try rsakitOK(["export", "-t", "alice"]).stdout).write(to: URL(fileURLWithPath: path("alice.pub.pem")))
    }

    private func pkcs11Tool(_ arguments: [String], environment: [String: String?] = [:]) throws -> Result {
        try run(
            [try tool("pkcs11-tool", package: "opensc"), "--module", Self.module] + arguments, environment: environment)
    }

    // MARK: Objects

    func testListAll_P11Tool_ShowsCertificateAndKeysWithLabelAndOneID() throws {
        try importAlice()
        let p11tool = try tool("p11tool", package: "gnutls-bin")
        let listing = try runOK([p11tool, "--provider", Self.module, "--list-all"]).stdoutText
        let objects = listing.components(separatedBy: "Object ").dropFirst()
        let alice = objects.filter { $0.contains("Label: alice\n") }
        XCTAssertEqual(alice.filter { $0.contains("Type: X.509 Certificate") }.count, 1, listing)
        XCTAssertEqual(alice.filter { $0.contains("Type: Private key (RSA-2048)") }.count, 1, listing)
        XCTAssertEqual(alice.filter { $0.contains("Type: Public key (RSA-2048)") }.count, 1, listing)
        // CKA_ID links them: the same ID line on all three.
        let ids = Set(
            alice.compactMap { object in
                object.split(separator: "\n").first { $0.contains("ID: ") }.map {
                    String($0).trimmingCharacters(in: .whitespaces)
                }
            })
        XCTAssertEqual(ids.count, 1, "one CKA_ID for alice's objects: \(ids)")
        XCTAssertTrue(alice.first { $0.contains("Private key") }?.contains("CKA_SENSITIVE") == true, listing)
        // The private value never comes out: p11tool --export of the private key fails.
        let export = try run([p11tool, "--provider", Self.module, "--export", "pkcs11:object=alice;type=private"])
        XCTAssertNotEqual(export.status, 0, export.stdoutText)
        XCTAssertFalse(export.stdoutText.contains("PRIVATE KEY"), export.stdoutText)
    }

    /// RSAKIT_PKCS11_ACCESS_GROUPS: the slot shows only those groups' objects, so a program run
    /// for one service sees only its identity; the same tag in another group is that group's;
    /// a mistyped group leaves no token rather than showing every group.
    func testAccessGroups_SlotShowsOnlyTheConfiguredGroups_SignsWithThatGroupsKey() throws {
        try rsakitOK([
            "identity", "import", pki.path("alice.p12"), "--label", "alice", "--passin", "pass:alicepass",
            "--access-group", "com.example.mail"
        ])
        try Data(try rsakitOK(["export", "-t", "alice"]).stdout).write(to: URL(fileURLWithPath: path("alice.pub.pem")))
        try rsakitOK(["genpair", "--tag", "alice", "--bits", "1024", "--access-group", "com.example.web"])
        func objects(_ groups: String?) throws -> String {
            try pkcs11Tool(["--list-objects"], environment: ["RSAKIT_PKCS11_ACCESS_GROUPS": groups]).stdoutText
        }
        let mail = try objects("com.example.mail")
        XCTAssertTrue(mail.contains("Certificate Object") && mail.contains("RSA 2048 bits"), mail)
        XCTAssertFalse(mail.contains("RSA 1024 bits"), mail)
        let web = try objects(" com.example.web ")
        XCTAssertTrue(web.contains("RSA 1024 bits"), web)
        XCTAssertFalse(web.contains("Certificate Object") || web.contains("RSA 2048 bits"), web)
        let both = try objects("com.example.web,com.example.mail")
        XCTAssertTrue(both.contains("RSA 1024 bits") && both.contains("RSA 2048 bits"), both)
        XCTAssertTrue(try objects(nil).contains("RSA 1024 bits"))
        let mistyped = try pkcs11Tool(["--list-objects"], environment: ["RSAKIT_PKCS11_ACCESS_GROUPS": "../mail"])
        XCTAssertFalse(mistyped.stdoutText.contains("Object;"), mistyped.stdoutText)
        // The label is alice in both groups; with the mail group the signature is the identity's key's.
        let message = try write(testBytes(100), to: "message.bin")
        try _ = runOK(
            [
                try tool("pkcs11-tool", package: "opensc"), "--module", Self.module, "--sign", "-m", "SHA256-RSA-PKCS",
                "--label", "alice", "-i", message, "-o", path("s.bin")
            ],
            environment: ["RSAKIT_PKCS11_ACCESS_GROUPS": "com.example.mail"])
        try _ = runOK([
            try openssl(), "dgst", "-sha256", "-verify", path("alice.pub.pem"), "-signature", path("s.bin"), message
        ])
    }

    // MARK: Signatures and decryption

    func testSign_PKCS11Tool_RSAPKCSAndHashAndSignAndPSS_VerifiedByOpenSSL() throws {
        try importAlice()
        let openssl = try openssl()
        let message = try write(testBytes(1000), to: "message.bin")
        let digest = try write(try OpenSSL.run(["dgst", "-sha256", "-binary", message]), to: "digest.bin")
        // DigestInfo(SHA-256) prefix (RFC 8017 §9.2 note 1) || H, for CKM_RSA_PKCS.
        let prefix: [UInt8] = [
            0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04,
            0x20
        ]
        let digestInfo = try write(prefix + read(digest), to: "digestinfo.bin")
        let publicKey = path("alice.pub.pem")

        try _ = runOK([
            try tool("pkcs11-tool", package: "opensc"), "--module", Self.module, "--sign", "-m", "SHA256-RSA-PKCS",
            "--label", "alice", "-i", message, "-o", path("s1.bin")
        ])
        try _ = runOK([openssl, "dgst", "-sha256", "-verify", publicKey, "-signature", path("s1.bin"), message])

        try _ = runOK([
            try tool("pkcs11-tool", package: "opensc"), "--module", Self.module, "--sign", "-m", "RSA-PKCS",
            "--label", "alice", "-i", digestInfo, "-o", path("s2.bin")
        ])
        try _ = runOK([
            openssl, "pkeyutl", "-verify", "-pubin", "-inkey", publicKey, "-pkeyopt", "digest:sha256",
            "-in", digest, "-sigfile", path("s2.bin")
        ])

        try _ = runOK([
            try tool("pkcs11-tool", package: "opensc"), "--module", Self.module, "--sign", "-m", "RSA-PKCS-PSS",
            "--hash-algorithm", "SHA256", "--mgf", "MGF1-SHA256", "--label", "alice", "-i", digest, "-o", path("s3.bin")
        ])
        try _ = runOK([
            openssl, "pkeyutl", "-verify", "-pubin", "-inkey", publicKey, "-pkeyopt", "digest:sha256",
            "-pkeyopt", "rsa_padding_mode:pss", "-pkeyopt", "rsa_pss_saltlen:32", "-in", digest, "-sigfile",
            path("s3.bin")
        ])

        try _ = runOK([
            try tool("pkcs11-tool", package: "opensc"), "--module", Self.module, "--sign", "-m", "SHA384-RSA-PKCS-PSS",
            "--label", "alice", "-i", message, "-o", path("s4.bin")
        ])
        try _ = runOK([
            openssl, "dgst", "-sha384", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:48",
            "-verify", publicKey, "-signature", path("s4.bin"), message
        ])

        // A wrong signature does not verify (the check above is not vacuous).
        var broken = try read("s1.bin")
        broken[10] ^= 1
        let brokenPath = try write(broken, to: "broken.bin")
        let rejected = try run([openssl, "dgst", "-sha256", "-verify", publicKey, "-signature", brokenPath, message])
        XCTAssertNotEqual(rejected.status, 0)
    }

    func testDecrypt_PKCS11Tool_PKCS1AndOAEPOfOpenSSLCiphertexts_RawRSARefused() throws {
        try importAlice()
        let publicKey = path("alice.pub.pem")
        let secret = try write(testBytes(32, seed: 7).map { $0 | 1 }, to: "secret.bin")
        let pkcs1 = try write(
            try OpenSSL.run(["pkeyutl", "-encrypt", "-pubin", "-inkey", publicKey, "-in", secret]), to: "c1.bin")
        let oaep = try write(
            try OpenSSL.run([
                "pkeyutl", "-encrypt", "-pubin", "-inkey", publicKey, "-pkeyopt", "rsa_padding_mode:oaep",
                "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256", "-in", secret
            ]), to: "c2.bin")
        try _ = runOK([
            try tool("pkcs11-tool", package: "opensc"), "--module", Self.module, "--decrypt", "-m", "RSA-PKCS",
            "--label", "alice", "-i", pkcs1, "-o", path("p1.bin")
        ])
        XCTAssertEqual(try read("p1.bin"), try read(secret))
        try _ = runOK([
            try tool("pkcs11-tool", package: "opensc"), "--module", Self.module, "--decrypt", "-m", "RSA-PKCS-OAEP",
            "--hash-algorithm", "SHA256", "--mgf", "MGF1-SHA256", "--label", "alice", "-i", oaep, "-o", path("p2.bin")
        ])
        XCTAssertEqual(try read("p2.bin"), try read(secret))

        // Raw RSA (CKM_RSA_X_509) is refused for decryption and for signing.
        let raw = try pkcs11Tool(["--decrypt", "-m", "RSA-X-509", "--label", "alice", "-i", pkcs1, "-o", path("p3.bin")]
        )
        XCTAssertNotEqual(raw.status, 0)
        XCTAssertTrue(raw.stderr.contains("CKR_MECHANISM_INVALID"), raw.stderr)
        let rawSign = try pkcs11Tool(["--sign", "-m", "RSA-X-509", "--label", "alice", "-i", pkcs1, "-o", path("s.bin")]
        )
        XCTAssertTrue(rawSign.stderr.contains("CKR_MECHANISM_INVALID"), rawSign.stderr)
        // A damaged ciphertext is refused (pkcs11-tool then retries with C_DecryptUpdate, which
        // the module does not offer; PKCS11APIHarness checks C_Decrypt's own opaque
        // CKR_ENCRYPTED_DATA_INVALID).
        var damaged = try read("c2.bin")
        damaged[5] ^= 0x40
        let damagedPath = try write(damaged, to: "c3.bin")
        let refused = try pkcs11Tool([
            "--decrypt", "-m", "RSA-PKCS-OAEP", "--hash-algorithm", "SHA256", "--mgf", "MGF1-SHA256",
            "--label", "alice", "-i", damagedPath, "-o", path("p4.bin")
        ])
        XCTAssertNotEqual(refused.status, 0, refused.stderr)
        XCTAssertNotEqual(exists("p4.bin") ? try read("p4.bin") : [], try read(secret))
    }

    // MARK: Login

    func testProtectedStore_PrivateKeyNeedsLogin_WrongPINIsIncorrectAndChangesNothing() throws {
        try importAlice()
        try rsakitOK(
            ["store", "protect", "--kdf", "interactive"], environment: ["RSAKIT_STORE_PASSIN": "pass:store-secret"])
        let message = try write(testBytes(100), to: "m.bin")
        let before = try storeSnapshot()

        // Before login the private key is not visible.
        let p11tool = try tool("p11tool", package: "gnutls-bin")
        let listing = try runOK([p11tool, "--provider", Self.module, "--list-all"]).stdoutText
        XCTAssertTrue(listing.contains("Label: alice"), listing)
        XCTAssertFalse(listing.contains("Private key"), listing)
        let token = try pkcs11Tool(["--list-token-slots"]).stdoutText
        XCTAssertTrue(token.contains("login required"), token)

        // The PIN comes from the environment (pkcs11-tool's env: form), never from argv.
        let wrong = try pkcs11Tool(
            [
                "--login", "--pin", "env:TEST_PIN", "--sign", "-m", "SHA256-RSA-PKCS", "--label", "alice",
                "-i", message, "-o", path("sig.bin")
            ], environment: ["TEST_PIN": "not-the-passphrase"])
        XCTAssertNotEqual(wrong.status, 0)
        XCTAssertTrue(wrong.stderr.contains("CKR_PIN_INCORRECT"), wrong.stderr)
        XCTAssertEqual(try storeSnapshot(), before, "a failed login changed the store")

        try _ = runOK(
            [
                try tool("pkcs11-tool", package: "opensc"), "--module", Self.module, "--login", "--pin", "env:TEST_PIN",
                "--sign", "-m", "SHA256-RSA-PKCS", "--label", "alice", "-i", message, "-o", path("sig.bin")
            ],
            environment: ["TEST_PIN": "store-secret"])
        try _ = runOK([
            try openssl(), "dgst", "-sha256", "-verify", path("alice.pub.pem"), "-signature", path("sig.bin"), message
        ])
        XCTAssertEqual(try storeSnapshot(), before, "signing changed the store")
    }

    // MARK: The C API, from a C host

    /// Tests/PKCS11APIHarness (built beside rsakit) calls the module as a C host does.
    private func harness(_ arguments: [String], environment: [String: String?] = [:]) throws -> Result {
        let harness = Self.productsDirectory.appendingPathComponent("PKCS11APIHarness").path
        guard FileManager.default.isExecutableFile(atPath: harness) else {
            XCTFail("\(harness) is not built: run `swift build --build-tests`")
            throw CocoaError(.fileNoSuchFile)
        }
        return try run([harness, Self.module] + arguments, environment: environment)
    }

    func testAPI_ReturnCodesAttributesOutputLengthsThreadsAndReinitialisation() throws {
        try importAlice()
        let plaintext = try write(testBytes(40, seed: 3).map { $0 | 1 }, to: "plain.bin")
        let ciphertext = try write(
            try OpenSSL.run(["pkeyutl", "-encrypt", "-pubin", "-inkey", path("alice.pub.pem"), "-in", plaintext]),
            to: "cipher.bin")
        // The harness changes the store with the built rsakit while it runs (same RSAKIT_STORE).
        let rsakit = Self.binary.path
        let result = try harness(
            ["alice"],
            environment: [
                "PKCS11_HARNESS_CIPHERTEXT": ciphertext, "PKCS11_HARNESS_PLAINTEXT": plaintext,
                "PKCS11_HARNESS_ADD_COMMAND": "'\(rsakit)' genpair -t watch-added --bits 1024 -q >/dev/null",
                "PKCS11_HARNESS_DELETE_COMMAND": "'\(rsakit)' delete -t watch-added -q >/dev/null",
                "PKCS11_HARNESS_ADDED_LABEL": "watch-added"
            ])
        XCTAssertTrue(result.stdoutText.contains("ok: then the plaintext"), result.stdoutText)
        XCTAssertTrue(result.stdoutText.contains("ok: after C_Initialize again"), result.stdoutText)
        XCTAssertEqual(result.status, 0, result.stdoutText + result.stderr)
        XCTAssertTrue(result.stdoutText.contains("PASSED: 0 failures"), result.stdoutText)
        XCTAssertFalse(result.stdoutText.contains("FAIL"), result.stdoutText)
    }

    func testAPI_ProtectedStore_EmptyPINLogsInThroughTheAgentOnly() throws {
        try importAlice()
        try rsakitOK(
            ["store", "protect", "--kdf", "interactive"], environment: ["RSAKIT_STORE_PASSIN": "pass:store-secret"])
        let socket = path("agent.sock")
        let agentEnvironment: [String: String?] = [
            "RSAKIT_AGENT_SOCK": socket, "RSAKIT_STORE_PASSIN": nil, "RSAKIT_PASSIN": nil
        ]
        // No agent: an empty PIN is refused.
        let refused = try harness(["alice", "login-empty-pin-refused"], environment: agentEnvironment)
        XCTAssertEqual(refused.status, 0, refused.stdoutText + refused.stderr)
        try rsakitOK(
            ["agent", "start", "--store-passin", "env:AGENT_TEST_PASS"],
            environment: agentEnvironment.merging(["AGENT_TEST_PASS": "store-secret"]) { $1 })
        defer { _ = try? rsakit(["agent", "stop"], environment: agentEnvironment) }
        let result = try harness(["alice", "login-empty-pin-ok"], environment: agentEnvironment)
        XCTAssertEqual(result.status, 0, result.stdoutText + result.stderr)
        XCTAssertTrue(result.stdoutText.contains("PASSED: 0 failures"), result.stdoutText)
    }

    /// While the agent holds the protected store, the token reports a protected authentication
    /// path and real hosts log in with no PIN at all: pkcs11-tool signs (verified by openssl),
    /// p11tool lists the private key, curl authenticates through libp11. Once the agent is
    /// stopped the flag is gone and the private key is out of reach without the passphrase.
    func testProtectedStore_AgentHoldsTheStore_HostsLogInWithoutAPIN() throws {
        try importAlice()
        try rsakitOK(
            ["store", "protect", "--kdf", "interactive"], environment: ["RSAKIT_STORE_PASSIN": "pass:store-secret"])
        let environment: [String: String?] = [
            "RSAKIT_AGENT_SOCK": path("agent.sock"), "RSAKIT_STORE_PASSIN": nil, "RSAKIT_PASSIN": nil
        ]
        let before = try pkcs11Tool(["--list-token-slots"], environment: environment).stdoutText
        XCTAssertFalse(before.contains("PIN pad present"), before)
        try rsakitOK(
            ["agent", "start", "--store-passin", "env:AGENT_TEST_PASS"],
            environment: environment.merging(["AGENT_TEST_PASS": "store-secret"]) { $1 })
        defer { _ = try? rsakit(["agent", "stop"], environment: environment) }

        let slots = try pkcs11Tool(["--list-token-slots"], environment: environment).stdoutText
        XCTAssertTrue(slots.contains("PIN pad present"), slots)
        let message = try write(testBytes(100), to: "m.bin")
        _ = try runOK(
            [
                try tool("pkcs11-tool", package: "opensc"), "--module", Self.module, "--login", "--sign",
                "-m", "SHA256-RSA-PKCS", "--label", "alice", "-i", message, "-o", path("sig.bin")
            ],
            environment: environment)
        _ = try runOK([
            try openssl(), "dgst", "-sha256", "-verify", path("alice.pub.pem"), "-signature", path("sig.bin"), message
        ])
        let p11tool = try tool("p11tool", package: "gnutls-bin")
        let privateKeys = try runOK(
            [p11tool, "--provider", Self.module, "--login", "--list-privkeys"],
            environment: environment
        ).stdoutText
        XCTAssertTrue(privateKeys.contains("Label: alice"), privateKeys)
        let engine = "/usr/lib/x86_64-linux-gnu/engines-3/pkcs11.so"
        if FileManager.default.fileExists(atPath: engine) {
            let page = try curlThroughEngine(
                try tool("curl", package: "curl"), engine: engine, environment: environment)
            XCTAssertTrue(
                page.stdoutText.contains("CN=alice") || page.stdoutText.contains("CN = alice"), page.stdoutText)
        }

        try rsakitOK(["agent", "stop"], environment: environment)
        let after = try pkcs11Tool(["--list-token-slots"], environment: environment).stdoutText
        XCTAssertFalse(after.contains("PIN pad present"), after)
        let listing = try runOK([p11tool, "--provider", Self.module, "--list-all"], environment: environment).stdoutText
        XCTAssertFalse(listing.contains("Private key"), listing)
    }

    // MARK: Clients against servers

    func testMutualTLS_GnuTLSCliWithPKCS11URIs_ServerSawTheClientCertificate() throws {
        try importAlice()
        let gnutlsCLI = try tool("gnutls-cli", package: "gnutls-bin")
        let arguments = [
            "-Verify", "1", "-verify_return_error", "-CAfile", pki.path("ca.pem"),
            "-cert", pki.path("srv.pem"), "-cert_chain", pki.path("int.pem"), "-key", pki.path("srv.key")
        ]
        let server = try TLSTestServer(openssl: try openssl(), arguments: arguments, directory: workDirectory.path)
        servers.append(server)
        let result = try runProcess(
            "/usr/bin/timeout",
            [
                "-k", "5", "60", gnutlsCLI, "--port", String(server.port), "127.0.0.1",
                "--x509cafile", pki.path("ca.pem"), "--provider", Self.module,
                "--x509certfile", "pkcs11:object=alice;type=cert",
                "--x509keyfile", "pkcs11:object=alice;type=private"
            ],
            stdin: Array("hello from the token\n".utf8))
        XCTAssertTrue(result.stdoutText.contains("Handshake was completed"), result.stdoutText + result.stderr)
        XCTAssertTrue(server.waitForLog("hello from the token"), server.log)
        XCTAssertTrue(server.log.contains("CN = alice"), "s_server did not see alice's certificate: \(server.log)")
    }

    func testMutualTLS_CurlThroughOpenSSLsPKCS11Engine_ServerSawTheClientCertificate() throws {
        try importAlice()
        let curl = try tool("curl", package: "curl")
        let engine = "/usr/lib/x86_64-linux-gnu/engines-3/pkcs11.so"
        guard FileManager.default.fileExists(atPath: engine) else {
            XCTFail("\(engine) not found: scripts/install-deps.sh installs it (apt package libengine-pkcs11-openssl)")
            return
        }
        let result = try curlThroughEngine(curl, engine: engine)
        // s_server -www describes the session, the client certificate included.
        XCTAssertTrue(result.stdoutText.contains("Client certificate"), result.stdoutText)
        XCTAssertTrue(
            result.stdoutText.contains("CN=alice") || result.stdoutText.contains("CN = alice"), result.stdoutText)
    }

    /// curl with OpenSSL's pkcs11 engine (libp11) over this module, alice's certificate and
    /// key by PKCS#11 URI, against an `openssl s_server -www` that requires a client
    /// certificate: s_server's page, which describes the session.
    private func curlThroughEngine(_ curl: String, engine: String, environment: [String: String?] = [:]) throws
        -> Result
    {
        // OpenSSL's engine configuration (libp11's README): the engine, and our module under it.
        let configuration = """
            openssl_conf = openssl_init
            [openssl_init]
            engines = engine_section
            [engine_section]
            pkcs11 = pkcs11_section
            [pkcs11_section]
            engine_id = pkcs11
            dynamic_path = \(engine)
            MODULE_PATH = \(Self.module)
            init = 0
            """
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: path("openssl-engine.cnf")))
        let arguments = [
            "-Verify", "1", "-verify_return_error", "-CAfile", pki.path("ca.pem"),
            "-cert", pki.path("srv.pem"), "-cert_chain", pki.path("int.pem"), "-key", pki.path("srv.key"), "-www"
        ]
        let server = try TLSTestServer(openssl: try openssl(), arguments: arguments, directory: workDirectory.path)
        servers.append(server)
        return try runOK(
            [
                curl, "-sS", "--cacert", pki.path("ca.pem"), "--engine", "pkcs11",
                "--cert", "pkcs11:object=alice;type=cert", "--cert-type", "ENG",
                "--key", "pkcs11:object=alice;type=private", "--key-type", "ENG",
                "https://localhost:\(server.port)/"
            ],
            environment: environment.merging(["OPENSSL_CONF": path("openssl-engine.cnf")]) { $1 })
    }

    /// NSS, the library of Firefox and Chromium: the module added to a fresh NSS database with
    /// modutil, its identity listed by certutil as a user certificate (u,u,u: NSS found the key
    /// by CKA_ID), and NSS's own TLS client (tstclnt -n) authenticating with it.
    func testMutualTLS_NSSWithTheModuleInItsDatabase_ServerSawTheClientCertificate() throws {
        try importAlice()
        let certutil = try tool("certutil", package: "libnss3-tools")
        let modutil = try tool("modutil", package: "libnss3-tools")
        let tstclnt = try tool("tstclnt", package: "libnss3-tools")
        let database = "sql:" + path("nssdb")
        try FileManager.default.createDirectory(atPath: path("nssdb"), withIntermediateDirectories: true)
        try _ = runOK([certutil, "-N", "-d", database, "--empty-password"])
        try _ = runOK([modutil, "-dbdir", database, "-add", "rsakit", "-libfile", Self.module, "-force"])
        let listing = try runOK([certutil, "-L", "-d", database, "-h", "all"]).stdoutText
        let line = listing.split(separator: "\n").first { $0.hasPrefix("rsakit store:alice ") }
        XCTAssertTrue(line?.hasSuffix("u,u,u") == true, listing)
        let arguments = [
            "-Verify", "1", "-verify_return_error", "-CAfile", pki.path("ca.pem"),
            "-cert", pki.path("srv.pem"), "-cert_chain", pki.path("int.pem"), "-key", pki.path("srv.key"), "-www"
        ]
        let server = try TLSTestServer(openssl: try openssl(), arguments: arguments, directory: workDirectory.path)
        servers.append(server)
        let request = try write(Array("GET / HTTP/1.0\r\n\r\n".utf8), to: "request.txt")
        // -o: no check of the server's certificate (this test is about the client's).
        let result = try run([
            tstclnt, "-h", "127.0.0.1", "-p", String(server.port), "-d", database,
            "-n", "rsakit store:alice", "-o", "-A", request
        ])
        XCTAssertTrue(result.stdoutText.contains("Client certificate"), result.stdoutText + result.stderr)
        XCTAssertTrue(
            result.stdoutText.contains("CN=alice") || result.stdoutText.contains("CN = alice"), result.stdoutText)
    }

    /// A throw-away sshd (SSHDFixture) whose authorized_keys is alice's key as the module
    /// lists it (`ssh-keygen -D`); stopped by the returned process's owner.
    private func startSSHD() throws -> (server: ChildProcess, port: Int, user: String, log: String) {
        let keys = try runOK([try tool("ssh-keygen", package: "openssh-client"), "-D", Self.module]).stdoutText
        let alice = keys.split(separator: "\n").filter { $0.hasSuffix(" alice") }
        XCTAssertEqual(alice.count, 1, keys)
        return try startThrowAwaySSHD(authorizedKeys: alice.joined(separator: "\n") + "\n")
    }

    private func ssh(
        port: Int, user: String, command: String, extra: [String] = [], environment: [String: String?] = [:]
    ) throws -> Result {
        try run(
            [
                try tool("ssh", package: "openssh-client"), "-F", "/dev/null", "-I", Self.module, "-p", String(port),
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "IdentityAgent=none"
            ]
                + extra + ["-l", user, "127.0.0.1", command], environment: environment)
    }

    func testSSH_PKCS11Provider_LogsIntoThrowAwaySSHD() throws {
        try importAlice()
        let (server, port, user, log) = try startSSHD()
        defer { server.send(SIGTERM); _ = try? server.wait(timeout: 5) }
        let result = try ssh(
            port: port, user: user, command: "echo logged-in-through-rsakit", extra: ["-o", "BatchMode=yes"])
        let sshdLog = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        XCTAssertEqual(result.stdoutText, "logged-in-through-rsakit\n", result.stderr + "\nsshd: " + sshdLog)
        XCTAssertTrue(sshdLog.contains("Accepted publickey for \(user)"), sshdLog)
    }

    /// A protected store: ssh asks for the token's PIN (SSH_ASKPASS here, answering an empty
    /// line); the empty PIN logs in through the running agent, and fails once it is stopped.
    func testSSH_ProtectedStore_EmptyPINLogsInThroughTheAgent() throws {
        try importAlice()
        let (server, port, user, log) = try startSSHD()
        defer { server.send(SIGTERM); _ = try? server.wait(timeout: 5) }
        try rsakitOK(
            ["store", "protect", "--kdf", "interactive"], environment: ["RSAKIT_STORE_PASSIN": "pass:store-secret"])
        let askpass = path("empty-pin.sh")
        try Data("#!/bin/sh\necho\n".utf8).write(to: URL(fileURLWithPath: askpass))
        chmod(askpass, 0o700)
        let environment: [String: String?] = [
            "RSAKIT_AGENT_SOCK": path("agent.sock"), "RSAKIT_STORE_PASSIN": nil, "RSAKIT_PASSIN": nil,
            "SSH_ASKPASS": askpass, "SSH_ASKPASS_REQUIRE": "force", "DISPLAY": ":0"
        ]
        try rsakitOK(
            ["agent", "start", "--store-passin", "env:AGENT_TEST_PASS"],
            environment: environment.merging(["AGENT_TEST_PASS": "store-secret"]) { $1 })
        let result = try ssh(
            port: port, user: user, command: "echo logged-in-through-the-agent", environment: environment)
        XCTAssertEqual(
            result.stdoutText, "logged-in-through-the-agent\n",
            result.stderr + "\nsshd: " + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
        try rsakitOK(["agent", "stop"], environment: environment)
        let refused = try ssh(port: port, user: user, command: "echo should-not-log-in", environment: environment)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertEqual(refused.stdoutText, "", refused.stderr)
    }
}
