import Foundation
import XCTest
import RSAKitTestSupport

/// The system keychain with real Unix users (root only): an agent started by hand as the
/// store's own user, rules set by root, a service user allowed by name and one allowed through
/// its Unix group, each getting only its group's password, signature (checked with openssl)
/// and decryption; another user and another group refused; a mistyped access group refused
/// rather than created; rule changes by anyone but root refused.
final class CLISystemKeychainTests: CLITestCase {
    private var system: SystemKeychainFixture?

    override func tearDownWithError() throws {
        system?.remove()
        try super.tearDownWithError()
    }

    func testAgentServesAllowedGroupsOnlyAndRootAloneChangesRules() throws {
        // The store's parent and the socket's folder belong to the agent's user (the fixture).
        let system = try SystemKeychainFixture(binary: Self.binary)
        self.system = system
        let fx = system.users
        let webGroup = try fx.group("rkw")
        let owner = system.owner
        let mail = try fx.user("rkm")
        let web = try fx.user("rkn", groups: [webGroup])
        let other = try fx.user("rko")
        let store = system.store, socket = system.socket
        // Root refuses to be the agent; the store's user is.
        XCTAssertEqual(
            try system.rsakit(nil, ["agent", "serve", "--system", "--store", store, "--socket", socket]).status, 64)
        guard try system.startAgent() else { return }
        var st = stat()
        XCTAssertEqual(lstat(store, &st), 0)
        XCTAssertEqual(st.st_uid, fx.uid(owner))
        XCTAssertEqual(st.st_mode & 0o777, 0o700)

        // Rules: root only; a mistyped Unix user or an invalid group name stores nothing.
        XCTAssertEqual(
            try system.rsakit(nil, ["access-group", "allow", "com.example.mail", "--user", mail]).stdoutText,
            "allowed: com.example.mail user \(mail)\n")
        XCTAssertEqual(
            try system.rsakit(nil, ["access-group", "allow", "com.example.web", "--group", webGroup]).status, 0)
        let notRoot = try system.rsakit(mail, ["access-group", "allow", "com.example.web", "--user", mail])
        XCTAssertEqual(notRoot.status, 77)
        XCTAssertTrue(
            notRoot.stderr.contains("only root may change the system keychain's rules (you are \(mail)"), notRoot.stderr
        )
        let noSuchUser = try system.rsakit(
            nil, ["access-group", "allow", "com.example.mail", "--user", "nosuch" + fx.suffix])
        XCTAssertEqual(noSuchUser.status, 64)
        XCTAssertTrue(noSuchUser.stderr.contains("no Unix user is named"), noSuchUser.stderr)
        XCTAssertEqual(
            try system.rsakit(nil, ["access-group", "list"]).stdoutText,
            "com.example.mail user \(mail)\ncom.example.web group \(webGroup)\n")

        // Root provisions a password per group through the agent; the store's user adds a key.
        for (group, service, account, secret) in [
            ("com.example.mail", "imap", "a", "mail-secret"), ("com.example.web", "web", "w", "web-secret")
        ] {
            let added = try system.rsakit(
                nil,
                ["password", "add", "--system", "--access-group", group, "--service", service, "--account", account],
                stdin: Array(secret.utf8))
            XCTAssertEqual(added.status, 0, "\(group): \(added.stderr)")
        }
        XCTAssertEqual(try system.genpair(tag: "mail.key", accessGroup: "com.example.mail").status, 0)
        let publicKey = try write(
            try system.rsakit(owner, ["export", "--tag", "mail.key", "--store", store]).stdout, to: "pub.pem")
        let message = try write(Array("signed by the system keychain".utf8), to: "message")
        chmod(workDirectory.path, 0o755)
        chmod(message, 0o644)

        // The user allowed by name: its password, a signature openssl verifies, a decryption.
        XCTAssertEqual(
            try system.rsakit(mail, ["password", "find", "--system", "--service", "imap", "--account", "a", "--value"])
                .stdoutText,
            "mail-secret")
        let signature = try system.rsakit(mail, ["sign", "--system", "--tag", "mail.key", "--in", message])
        XCTAssertEqual(signature.status, 0, signature.stderr)
        let signatureFile = try write(signature.stdout, to: "sig")
        let verified = try ChildProcess.run([
            "/usr/bin/openssl", "dgst", "-sha256", "-verify", publicKey, "-signature", signatureFile, message
        ])
        XCTAssertEqual(verified.stdoutText, "Verified OK\n", verified.stderr)
        let ciphertext = path("ct")
        XCTAssertEqual(
            try ChildProcess.run([
                "/usr/bin/openssl", "pkeyutl", "-encrypt", "-pubin", "-inkey", publicKey, "-in", message,
                "-out", ciphertext
            ]).status, 0)
        chmod(ciphertext, 0o644)
        XCTAssertEqual(
            try system.rsakit(mail, ["decrypt", "--system", "--tag", "mail.key", "--in", ciphertext]).stdoutText,
            "signed by the system keychain")
        let mailList = try system.rsakit(mail, ["list", "--system"]).stdoutText
        XCTAssertEqual(
            mailList,
            "public key mail.key  [group: com.example.mail]\nprivate key mail.key  [group: com.example.mail]\n"
                + "password imap / a  [group: com.example.mail]\n")
        // ...and nothing of the other group: not found, or refused when named.
        XCTAssertEqual(
            try system.rsakit(mail, ["password", "find", "--system", "--service", "web", "--account", "w", "--value"])
                .status,
            66)
        XCTAssertEqual(
            try system.rsakit(
                mail,
                [
                    "password", "find", "--system", "--service", "web", "--account", "w", "--value",
                    "--access-group", "com.example.web"
                ]
            ).status, 77)
        // A mistyped access group is refused, not created.
        let typo = try system.rsakit(
            mail,
            [
                "password", "add", "--system", "--access-group", "com.exmaple.mail", "--service", "x",
                "--account", "y"
            ], stdin: Array("v".utf8))
        XCTAssertEqual(typo.status, 77)
        XCTAssertTrue(
            typo.stderr.contains("is not allowed access group \"com.exmaple.mail\" (allowed: \"com.example.mail\")"),
            typo.stderr)
        XCTAssertFalse(try system.rsakit(nil, ["list", "--system"]).stdoutText.contains("exmaple"))

        // The user allowed through its Unix group: the web password, none of the mail items.
        XCTAssertEqual(
            try system.rsakit(web, ["password", "find", "--system", "--service", "web", "--account", "w", "--value"])
                .stdoutText,
            "web-secret")
        XCTAssertEqual(
            try system.rsakit(web, ["password", "find", "--system", "--service", "imap", "--account", "a", "--value"])
                .status,
            66)
        let webSign = try system.rsakit(
            web, ["sign", "--system", "--tag", "mail.key", "--in", message, "--access-group", "com.example.mail"])
        XCTAssertEqual(webSign.status, 77, webSign.stderr)
        XCTAssertEqual(webSign.stdout, [])

        // A user no rule names: refused for everything, with who it is; nor can it read the files.
        for arguments in [
            ["password", "find", "--system", "--service", "imap", "--account", "a", "--value"],
            ["sign", "--system", "--tag", "mail.key", "--in", message], ["list", "--system"]
        ] {
            let refused = try system.rsakit(other, arguments)
            XCTAssertEqual(refused.status, 77, "\(arguments): \(refused.stderr)")
            XCTAssertEqual(refused.stdout, [])
            XCTAssertTrue(
                refused.stderr.contains(
                    "user \(other) (uid \(fx.uid(other))) is allowed no access group of the system keychain"),
                refused.stderr)
        }
        XCTAssertEqual(try system.rsakit(mail, ["list", "--store", store]).status, 77)

        // deny takes a rule away at once.
        XCTAssertEqual(try system.rsakit(nil, ["access-group", "deny", "com.example.mail", "--user", mail]).status, 0)
        XCTAssertEqual(
            try system.rsakit(mail, ["password", "find", "--system", "--service", "imap", "--account", "a", "--value"])
                .status,
            77)

        // SIGTERM ends the agent and removes its socket.
        system.agent!.process.send(SIGTERM)
        XCTAssertEqual(try system.agent!.process.wait(timeout: 10), .exited(0))
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket))
        let gone = try system.rsakit(
            mail, ["password", "find", "--system", "--service", "imap", "--account", "a", "--value"])
        XCTAssertEqual(gone.status, 1)
        XCTAssertTrue(gone.stderr.contains("no system keychain agent listens there"), gone.stderr)
    }
}
