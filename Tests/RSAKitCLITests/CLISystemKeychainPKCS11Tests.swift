import Foundation
import XCTest
import RSAKitTestSupport

/// The PKCS#11 module over the system keychain (root only; real users through setpriv, an
/// agent started by hand as the store's user): with RSAKIT_PKCS11_SYSTEM=1 pkcs11-tool, run as
/// an allowed service user, lists that group's key, logs in with no PIN and signs (verified by
/// openssl); a user allowed another group sees no object of it and signs only with its own key;
/// a user no rule names sees no token at all.
final class CLISystemKeychainPKCS11Tests: CLITestCase {
    private var fixture: UnixUsersFixture?
    private var agent: ChildProcess.Captured?

    override func tearDownWithError() throws {
        if let agent, agent.process.isRunning { agent.process.kill9() }
        fixture?.remove()
        try super.tearDownWithError()
    }

    func testModuleServesTheAllowedGroupThroughTheAgent() throws {
        let module = Self.productsDirectory.appendingPathComponent("librsakit-pkcs11.so")
        guard FileManager.default.fileExists(atPath: module.path) else {
            return XCTFail("\(module.path) is not built: run `swift build --product rsakit-pkcs11` (scripts/test.sh does)")
        }
        let pkcs11Tool = try requiredTool("pkcs11-tool", package: "opensc")
        let fx = try UnixUsersFixture(binary: Self.binary)
        fixture = fx
        let owner = try fx.user("rks")
        let mail = try fx.user("rkm")
        let web = try fx.user("rkn")
        let other = try fx.user("rko")
        // The module beside the binary copy, readable by the service users.
        let moduleCopy = fx.folder + "/librsakit-pkcs11.so"
        try FileManager.default.copyItem(atPath: module.path, toPath: moduleCopy)
        chmod(moduleCopy, 0o755)
        let state = fx.folder + "/state", run = fx.folder + "/run", out = fx.folder + "/out"
        for folder in [state, run] {
            mkdir(folder, 0o755)
            chown(folder, fx.uid(owner), gid_t.max)
        }
        mkdir(out, 0o755)
        chown(out, fx.uid(mail), gid_t.max)
        let store = state + "/system", socket = run + "/system.sock"
        let env = ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "RSAKIT_SYSTEM_SOCKET": socket]
        func rsakit(_ user: String?, _ arguments: [String]) throws -> ChildProcessResult {
            let command = [fx.binary] + arguments
            return try ChildProcess.run(user.map { fx.asUser($0, command) } ?? command, environment: env)
        }
        func tool(_ user: String, _ arguments: [String]) throws -> ChildProcessResult {
            try ChildProcess.run(fx.asUser(user, ["/usr/bin/timeout", "-k", "5", "30", pkcs11Tool, "--module", moduleCopy] + arguments),
                                 environment: env.merging(["RSAKIT_PKCS11_SYSTEM": "1"]) { $1 })
        }
        agent = try ChildProcess.start(fx.asUser(owner, [fx.binary, "agent", "serve", "--system", "--store", store, "--socket", socket]),
                                       environment: env)
        guard agent!.waitForStdout(startingWith: "listening: \(socket)\n", timeout: 30) else {
            return XCTFail("the agent did not start: \(try agent!.finish(timeout: 5).stderr)")
        }
        XCTAssertEqual(try rsakit(nil, ["access-group", "allow", "com.example.mail", "--user", mail]).status, 0)
        XCTAssertEqual(try rsakit(nil, ["access-group", "allow", "com.example.web", "--user", web]).status, 0)
        XCTAssertEqual(try rsakit(owner, ["genpair", "--tag", "mail.key", "--bits", "1024", "--access-group", "com.example.mail",
                                          "--store", store]).status, 0)
        XCTAssertEqual(try rsakit(owner, ["genpair", "--tag", "web.key", "--bits", "1024", "--access-group", "com.example.web",
                                          "--store", store]).status, 0)
        let publicKey = try write(try rsakit(owner, ["export", "--tag", "mail.key", "--store", store]).stdout, to: "pub.pem")
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
        XCTAssertTrue(listed.stdoutText.contains("Private Key Object; RSA") && listed.stdoutText.contains("label:      mail.key"),
                      listed.stdoutText)
        XCTAssertFalse(listed.stdoutText.contains("web.key"), listed.stdoutText)
        let signed = try tool(mail, ["--login", "--sign", "-m", "SHA256-RSA-PKCS", "--label", "mail.key", "-i", message,
                                     "-o", out + "/sig"])
        XCTAssertEqual(signed.status, 0, signed.stdoutText + signed.stderr)
        let verified = try ChildProcess.run(["/usr/bin/openssl", "dgst", "-sha256", "-verify", publicKey, "-signature", out + "/sig", message])
        XCTAssertEqual(verified.stdoutText, "Verified OK\n", verified.stderr)

        // A user allowed another group: no object of the mail group, no signature with its key.
        chown(out, fx.uid(web), gid_t.max)
        let webListed = try tool(web, ["--list-objects"]).stdoutText
        XCTAssertTrue(webListed.contains("label:      web.key"), webListed)
        XCTAssertFalse(webListed.contains("mail.key"), webListed)
        // (pkcs11-tool signs with the first private key it finds: the only one it can is web.key.)
        let webSign = try tool(web, ["--sign", "-m", "SHA256-RSA-PKCS", "-i", message, "-o", out + "/websig"])
        XCTAssertEqual(webSign.status, 0, webSign.stdoutText + webSign.stderr)
        let webPublicKey = try write(try rsakit(owner, ["export", "--tag", "web.key", "--store", store]).stdout, to: "webpub.pem")
        for (key, expected) in [(webPublicKey, "Verified OK\n"), (publicKey, "Verification failure\n")] {
            let checked = try ChildProcess.run(["/usr/bin/openssl", "dgst", "-sha256", "-verify", key, "-signature", out + "/websig", message])
            XCTAssertEqual(checked.stdoutText, expected, checked.stderr)
        }
        // A user no rule names: no token, so no object.
        let refused = try tool(other, ["--list-objects"])
        XCTAssertNotEqual(refused.status, 0, refused.stdoutText)
        XCTAssertFalse(refused.stdoutText.contains("Object;"), refused.stdoutText)

        // A rule taken away: the next host run by that user finds no token to sign with.
        XCTAssertEqual(try rsakit(nil, ["access-group", "deny", "com.example.mail", "--user", mail]).status, 0)
        let denied = try tool(mail, ["--sign", "-m", "SHA256-RSA-PKCS", "--label", "mail.key", "-i", message, "-o", "/dev/null"])
        XCTAssertNotEqual(denied.status, 0, denied.stdoutText)
    }
}
