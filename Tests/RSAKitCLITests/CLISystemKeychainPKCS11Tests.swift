import Foundation
import XCTest
import RSAKitTestSupport

/// The PKCS#11 module over the system keychain (root only; real users through setpriv, an
/// agent started by hand as the store's user): with RSAKIT_PKCS11_SYSTEM=1 pkcs11-tool, run as
/// an allowed service user, lists that group's key, logs in with no PIN and signs (verified by
/// openssl) and decrypts an OAEP block openssl made; a user allowed another group sees no object of it and signs only
/// with its own key;
/// a user no rule names sees no token at all. And `tls connect --system`: the allowed user
/// authenticates to `openssl s_server -Verify 1` with the group's identity, signed by the
/// agent; another user is refused (77) before connecting.
final class CLISystemKeychainPKCS11Tests: CLITestCase {
    private var system: SystemKeychainFixture?
    private var servers: [TLSTestServer] = []

    override func tearDownWithError() throws {
        servers.forEach { $0.stop() }
        system?.remove()
        try super.tearDownWithError()
    }

    func testModuleServesTheAllowedGroupThroughTheAgent() throws {
        let module = Self.productsDirectory.appendingPathComponent("librsakit-pkcs11.so")
        guard FileManager.default.fileExists(atPath: module.path) else {
            return XCTFail(
                "\(module.path) is not built: run `swift build --product rsakit-pkcs11` (scripts/test.sh does)")
        }
        let pkcs11Tool = try requiredTool("pkcs11-tool", package: "opensc")
        let system = try SystemKeychainFixture(binary: Self.binary)
        self.system = system
        let fx = system.users
        let mail = try fx.user("rkm")
        let web = try fx.user("rkn")
        let other = try fx.user("rko")
        // The module beside the binary copy, readable by the service users.
        let moduleCopy = fx.folder + "/librsakit-pkcs11.so"
        try FileManager.default.copyItem(atPath: module.path, toPath: moduleCopy)
        chmod(moduleCopy, 0o755)
        let out = fx.folder + "/out"
        mkdir(out, 0o755)
        chown(out, fx.uid(mail), gid_t.max)
        let store = system.store
        func tool(_ user: String, _ arguments: [String]) throws -> ChildProcessResult {
            try ChildProcess.run(
                fx.asUser(user, ["/usr/bin/timeout", "-k", "5", "30", pkcs11Tool, "--module", moduleCopy] + arguments),
                environment: system.environment.merging(["RSAKIT_PKCS11_SYSTEM": "1"]) { $1 })
        }
        guard try system.startAgent() else { return }
        XCTAssertEqual(try system.rsakit(nil, ["access-group", "allow", "com.example.mail", "--user", mail]).status, 0)
        XCTAssertEqual(try system.rsakit(nil, ["access-group", "allow", "com.example.web", "--user", web]).status, 0)
        XCTAssertEqual(try system.genpair(tag: "mail.key", accessGroup: "com.example.mail").status, 0)
        XCTAssertEqual(try system.genpair(tag: "web.key", accessGroup: "com.example.web").status, 0)
        let publicKey = try write(
            try system.rsakit(system.owner, ["export", "--tag", "mail.key", "--store", store]).stdout, to: "pub.pem")
        let message = out + "/message"
        try Data("signed through the module".utf8).write(to: URL(fileURLWithPath: message))
        chmod(message, 0o644)

        // The allowed user: its group's key pair, a PIN-less token, a signature openssl verifies.
        let slots = try tool(mail, ["--list-token-slots"])
        XCTAssertTrue(slots.stdoutText.contains("token label        : rsakit system"), slots.stdoutText + slots.stderr)
        XCTAssertTrue(slots.stdoutText.contains("PIN pad present"), slots.stdoutText)
        XCTAssertFalse(slots.stdoutText.contains("login required"), slots.stdoutText)
        let listed = try tool(mail, ["--list-objects"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertTrue(
            listed.stdoutText.contains("Private Key Object; RSA") && listed.stdoutText.contains("label:      mail.key"),
            listed.stdoutText)
        XCTAssertFalse(listed.stdoutText.contains("web.key"), listed.stdoutText)
        let signed = try tool(
            mail,
            [
                "--login", "--sign", "-m", "SHA256-RSA-PKCS", "--label", "mail.key", "-i", message,
                "-o", out + "/sig"
            ])
        XCTAssertEqual(signed.status, 0, signed.stdoutText + signed.stderr)
        let verified = try ChildProcess.run([
            "/usr/bin/openssl", "dgst", "-sha256", "-verify", publicKey, "-signature", out + "/sig", message
        ])
        XCTAssertEqual(verified.stdoutText, "Verified OK\n", verified.stderr)
        // C_Decrypt through the agent: a block openssl encrypted to the group's public key.
        XCTAssertEqual(
            try ChildProcess.run([
                "/usr/bin/openssl", "pkeyutl", "-encrypt", "-pubin", "-inkey", publicKey,
                "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256",
                "-pkeyopt", "rsa_mgf1_md:sha256", "-in", message, "-out", out + "/ct"
            ]).status, 0)
        chmod(out + "/ct", 0o644)
        let decrypted = try tool(
            mail,
            [
                "--decrypt", "-m", "RSA-PKCS-OAEP", "--hash-algorithm", "SHA256", "--mgf", "MGF1-SHA256",
                "-i", out + "/ct", "-o", out + "/pt"
            ])
        XCTAssertEqual(decrypted.status, 0, decrypted.stdoutText + decrypted.stderr)
        XCTAssertEqual(try String(contentsOfFile: out + "/pt", encoding: .utf8), "signed through the module")

        // A user allowed another group: no object of the mail group, no signature with its key.
        chown(out, fx.uid(web), gid_t.max)
        let webListed = try tool(web, ["--list-objects"]).stdoutText
        XCTAssertTrue(webListed.contains("label:      web.key"), webListed)
        XCTAssertFalse(webListed.contains("mail.key"), webListed)
        // (pkcs11-tool signs with the first private key it finds: the only one it can is web.key.)
        let webSign = try tool(web, ["--sign", "-m", "SHA256-RSA-PKCS", "-i", message, "-o", out + "/websig"])
        XCTAssertEqual(webSign.status, 0, webSign.stdoutText + webSign.stderr)
        let webPublicKey = try write(
            try system.rsakit(system.owner, ["export", "--tag", "web.key", "--store", store]).stdout, to: "webpub.pem")
        for (key, expected) in [(webPublicKey, "Verified OK\n"), (publicKey, "Verification failure\n")] {
            let checked = try ChildProcess.run([
                "/usr/bin/openssl", "dgst", "-sha256", "-verify", key, "-signature", out + "/websig", message
            ])
            XCTAssertEqual(checked.stdoutText, expected, checked.stderr)
        }
        // A user no rule names: no token, so no object.
        let refused = try tool(other, ["--list-objects"])
        XCTAssertNotEqual(refused.status, 0, refused.stdoutText)
        XCTAssertFalse(refused.stdoutText.contains("Object;"), refused.stdoutText)

        // A rule taken away: the next host run by that user finds no token to sign with.
        XCTAssertEqual(try system.rsakit(nil, ["access-group", "deny", "com.example.mail", "--user", mail]).status, 0)
        let denied = try tool(
            mail, ["--sign", "-m", "SHA256-RSA-PKCS", "--label", "mail.key", "-i", message, "-o", "/dev/null"])
        XCTAssertNotEqual(denied.status, 0, denied.stdoutText)
    }

    func testTLSConnectWithASystemKeychainIdentity() throws {
        let system = try SystemKeychainFixture(binary: Self.binary)
        self.system = system
        let fx = system.users
        let mail = try fx.user("rkm")
        let other = try fx.user("rko")
        let pki = try TLSTestPKI.shared(openssl: try openssl())
        // What the users read: the PKCS#12 file (the store's user) and the CA (the clients).
        for name in ["alice.p12", "ca.pem"] {
            try FileManager.default.copyItem(atPath: pki.path(name), toPath: fx.folder + "/" + name)
            chmod(fx.folder + "/" + name, 0o644)
        }
        let store = system.store
        func rsakit(_ user: String?, _ arguments: [String], stdin: [UInt8]? = nil) throws -> ChildProcessResult {
            try system.rsakit(user, arguments, stdin: stdin, timeoutSeconds: 30)
        }
        guard try system.startAgent() else { return }
        XCTAssertEqual(try rsakit(nil, ["access-group", "allow", "com.example.mail", "--user", mail]).status, 0)
        let imported = try rsakit(
            system.owner,
            [
                "identity", "import", fx.folder + "/alice.p12", "--label", "alice", "--passin", "pass:alicepass",
                "--access-group", "com.example.mail", "--store", store
            ])
        XCTAssertEqual(imported.status, 0, imported.stderr)

        let server = try startMutualTLSServer(pki, openssl: try openssl())
        servers.append(server)
        let request = Array("GET / HTTP/1.0\r\n\r\n".utf8)
        let connect = [
            "tls", "connect", "127.0.0.1:\(server.port)", "--system", "--identity", "alice", "--anchor",
            fx.folder + "/ca.pem",
            "--timeout", "20", "-v"
        ]
        let allowed = try rsakit(mail, connect + ["--tls1.3"], stdin: request)
        XCTAssertEqual(allowed.status, 0, allowed.stderr)
        TLSTestPKI.assertServerSawClientCertificate(
            allowed.stdoutText, version: "TLSv1.3", subject: "CN=alice, O=RSAKit Tests")
        XCTAssertTrue(allowed.stderr.contains("by the system keychain agent"), allowed.stderr)
        // By tag in the named group, TLS 1.2.
        let byTag = try rsakit(
            mail,
            [
                "tls", "connect", "127.0.0.1:\(server.port)", "--system", "--tag", "alice", "--access-group",
                "com.example.mail", "--anchor", fx.folder + "/ca.pem", "--tls1.2"
            ], stdin: request)
        XCTAssertEqual(byTag.status, 0, byTag.stderr)
        XCTAssertTrue(
            byTag.stdoutText.contains("New, TLSv1.2, Cipher is")
                && byTag.stdoutText.contains("Subject: CN=alice, O=RSAKit Tests"),
            byTag.stdoutText)

        // Another user: refused by the agent before any connection; an unknown label: 66.
        let refused = try rsakit(other, connect, stdin: request)
        XCTAssertEqual(refused.status, 77, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("is allowed no access group of the system keychain"), refused.stderr)
        XCTAssertEqual(refused.stdout, [])
        let unknown = try rsakit(
            mail,
            [
                "tls", "connect", "127.0.0.1:\(server.port)", "--system", "--identity", "bob",
                "--anchor", fx.folder + "/ca.pem"
            ], stdin: request)
        XCTAssertEqual(unknown.status, 66, unknown.stderr)
    }
}
