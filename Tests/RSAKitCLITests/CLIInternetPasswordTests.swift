import Foundation
import XCTest
import RSAKitTestSupport

/// Internet passwords through the built binary, and `git credential fill/approve/reject` with
/// real git against the helper (`git-credential-rsakit`, a link to the binary).
final class CLIInternetPasswordTests: CLITestCase {
    func testAddFindUpdateDelete_UniqueOnAllSevenAttributes() throws {
        let value: [UInt8] = Array("s3cret\u{0}\nbytes".utf8)
        try rsakitOK(
            ["internet-password", "add", "--url", "https://alice@Example.COM:8443/repo.git", "--label", "forge"],
            stdin: value)
        // The same key again is refused (73); --update changes the value and keeps the item id.
        assertFailure(
            try rsakit(
                [
                    "internet-password", "add", "--server", "example.com", "--protocol", "https", "--port", "8443",
                    "--path", "repo.git", "--account", "alice"
                ], stdin: [1]), status: 73, contains: "already exists")
        // Each attribute that differs makes another item.
        let others: [[String]] = [
            ["--url", "http://alice@example.com:8443/repo.git"],
            ["--url", "https://alice@example.com:8444/repo.git"],
            ["--url", "https://alice@example.com:8443/other.git"],
            ["--url", "https://bob@example.com:8443/repo.git"],
            ["--url", "https://alice@example.com:8443/repo.git", "--authentication-type", "httpBasic"],
            ["--url", "https://alice@example.com:8443/repo.git", "--security-domain", "realm"]
        ]
        for (index, options) in others.enumerated() {
            try rsakitOK(["internet-password", "add"] + options, stdin: [UInt8(index)])
        }
        XCTAssertEqual(
            try rsakitOK(["internet-password", "list", "--json"]).stdoutText.components(
                separatedBy: "\"internetPassword\""
            ).count - 1, 7)
        let exact = [
            "--url", "https://alice@example.com:8443/repo.git", "--authentication-type", "", "--security-domain", ""
        ]
        XCTAssertEqual(try rsakitOK(["internet-password", "find", "--value"] + exact).stdout, value)
        // Several matches and --value: refused, naming them (64); none: 66.
        assertFailure(
            try rsakit(["internet-password", "find", "--server", "example.com", "--value"]), status: 64,
            contains: "7 internet passwords match")
        assertFailure(
            try rsakit(["internet-password", "find", "--server", "example.org"]), status: 66,
            contains: "no internet password")
        let before = try rsakitOK(["internet-password", "find", "--json"] + exact).stdoutText
        try rsakitOK(["internet-password", "add", "--update"] + exact, stdin: Array("new".utf8))
        XCTAssertEqual(try rsakitOK(["internet-password", "find", "--value"] + exact).stdoutText, "new")
        let id = try XCTUnwrap(
            before.components(separatedBy: "\"itemID\" : \"").dropFirst().first?.prefix { $0 != "\"" })
        XCTAssertTrue(
            try rsakitOK(["show", "--id", String(id)]).stdoutText.contains(
                "class: internet password\nserver: example.com\nprotocol: https\nport: 8443\npath: "
                    + "repo.git\naccount: alice"
            ))
        XCTAssertTrue(
            try rsakitOK(["list"]).stdoutText.contains(
                "internet-password https://alice@example.com:8443/repo.git  (forge)"))
        // A password in the URL is refused: secrets never come from argv.
        assertFailure(
            try rsakit(["internet-password", "add", "--url", "https://alice:pw@example.com"], stdin: [1]), status: 64,
            contains: "the URL holds a password")
        try rsakitOK(["internet-password", "delete"] + exact)
        assertFailure(try rsakit(["internet-password", "delete"] + exact), status: 66, contains: "no internet password")
        XCTAssertEqual(
            try rsakitOK(["internet-password", "list", "--json"]).stdoutText.components(
                separatedBy: "\"internetPassword\""
            ).count - 1, 6)
    }

    func testProtectedStore_ValueIsSealedAndNeedsThePassphrase() throws {
        try rsakitOK(
            [
                "internet-password", "add", "--url", "imaps://carol@mail.example.com", "--protect", "--kdf",
                "interactive"
            ],
            stdin: Array("hunter2\nmail-secret-value".utf8), environment: ["RSAKIT_STORE_PASSIN": "stdin"])
        // No file of the store holds the value.
        let files = FileManager.default.enumerator(atPath: storeDirectory.path)!.compactMap { $0 as? String }
        for file in files {
            let bytes = (try? read(storeDirectory.appendingPathComponent(file).path)) ?? []
            XCTAssertFalse(String(decoding: bytes, as: UTF8.self).contains("mail-secret-value"), file)
        }
        XCTAssertEqual(try rsakitOK(["internet-password", "find", "--url", "imaps://mail.example.com"]).status, 0)
        assertFailure(
            try rsakit([
                "internet-password", "find", "--url", "imaps://mail.example.com", "--value", "--store-passin",
                "pass:wrong"
            ]),
            status: 65, contains: "wrong passphrase for the key store")
        XCTAssertEqual(
            try rsakitOK([
                "internet-password", "find", "--url", "imaps://mail.example.com", "--value", "--store-passin",
                "pass:hunter2"
            ]).stdoutText,
            "mail-secret-value")
    }

    /// git credential approve, fill and reject with the helper as git finds it on PATH.
    func testGitCredentialHelper_WithRealGit() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/git") else {
            throw XCTSkip("git is not installed: the helper is not tested with git")
        }
        let bin = path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: bin + "/git-credential-rsakit", withDestinationPath: Self.binary.path)
        let environment: [String: String?] = [
            "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "HOME": workDirectory.path, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
            "RSAKIT_STORE": storeDirectory.path
        ]
        func git(_ operation: String, _ input: String) throws -> Result {
            try runProcess(
                "/usr/bin/git", ["-c", "credential.helper=rsakit", "credential", operation], stdin: Array(input.utf8),
                environment: environment)
        }
        // fill with nothing stored: git would prompt, and prompts are off, so it fails.
        XCTAssertNotEqual(try git("fill", "protocol=https\nhost=git.example.com\n\n").status, 0)
        XCTAssertFalse(exists(storeDirectory.path), "get must not create a store")
        XCTAssertEqual(
            try git("approve", "protocol=https\nhost=git.example.com:8443\nusername=dave\npassword=tr0ub4dor&3\n\n")
                .status, 0)
        let listed = try rsakitOK(["internet-password", "find", "--server", "git.example.com", "--json"]).stdoutText
        XCTAssertTrue(
            listed.contains("\"port\" : 8443") && listed.contains("\"account\" : \"dave\"")
                && listed.contains("\"protocol\" : \"https\""), listed)
        let filled = try git("fill", "protocol=https\nhost=git.example.com:8443\n\n")
        XCTAssertEqual(filled.status, 0, filled.stderr)
        XCTAssertEqual(
            filled.stdoutText, "protocol=https\nhost=git.example.com:8443\nusername=dave\npassword=tr0ub4dor&3\n")
        // Another port or protocol is another item.
        XCTAssertNotEqual(try git("fill", "protocol=https\nhost=git.example.com\n\n").status, 0)
        XCTAssertNotEqual(try git("fill", "protocol=http\nhost=git.example.com:8443\n\n").status, 0)
        // approve again updates the value; reject erases.
        XCTAssertEqual(
            try git("approve", "protocol=https\nhost=git.example.com:8443\nusername=dave\npassword=correct-horse\n\n")
                .status, 0)
        XCTAssertTrue(
            try git("fill", "protocol=https\nhost=git.example.com:8443\nusername=dave\n\n").stdoutText.hasSuffix(
                "password=correct-horse\n"))
        XCTAssertEqual(try git("reject", "protocol=https\nhost=git.example.com:8443\nusername=dave\n\n").status, 0)
        assertFailure(
            try rsakit(["internet-password", "find", "--server", "git.example.com"]), status: 66,
            contains: "no internet password")
        // Malformed input is an error on stderr, exit 65; git reports and goes on.
        let malformed = try runProcess(
            bin + "/git-credential-rsakit", ["get"], stdin: Array("no equals sign\n".utf8), environment: environment)
        assertFailure(malformed, status: 65, contains: "a line without '='")
    }

    /// A real clone over HTTP: `git http-backend` behind Basic authentication on 127.0.0.1
    /// (Fixtures/git-http-server.py), the password only in the store, found by the helper.
    func testGitClone_OverHTTPWithBasicAuthentication_UsesTheStoredPassword() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/git"),
            let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(
                where: FileManager.default.isExecutableFile(atPath:))
                ?? (try? runProcess("/bin/sh", ["-c", "command -v python3"]))?.stdoutText.trimmingCharacters(
                    in: .whitespacesAndNewlines),
            !python.isEmpty
        else {
            throw XCTSkip("git or python3 missing: the HTTP clone through the credential helper is not tested")
        }
        let root = path("repos"), bin = path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: bin + "/git-credential-rsakit", withDestinationPath: Self.binary.path)
        let environment: [String: String?] = [
            "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "HOME": workDirectory.path, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"
        ]
        func git(_ arguments: [String]) throws -> Result {
            try runProcess("/usr/bin/git", arguments, environment: environment)
        }
        for arguments in [
            ["init", "-q", "--bare", "-b", "main", root + "/repo.git"], ["init", "-q", "-b", "main", path("src")],
            [
                "-C", path("src"), "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q",
                "--allow-empty", "-m", "first commit"
            ],
            ["-C", path("src"), "push", "-q", root + "/repo.git", "main"]
        ] {
            let run = try git(arguments)
            XCTAssertEqual(run.status, 0, "git \(arguments.joined(separator: " ")): \(run.stderr)")
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Fixtures/git-http-server.py"
        ).path
        let portFile = path("port")
        let server = try ChildProcess.start(
            [python, script, root, "erin", "pa55-w0rd", portFile],
            environment: childEnvironment(environment.compactMapValues { $0 }))
        defer { server.process.kill9() }
        let deadline = Date().addingTimeInterval(20)
        while !exists(portFile) && Date() < deadline { usleep(20_000) }
        let port = try XCTUnwrap(Int(String(decoding: try read(portFile), as: UTF8.self)), "the server did not start")
        let url = "http://127.0.0.1:\(port)/repo.git"
        // Without a stored password git cannot clone (prompts are off).
        XCTAssertNotEqual(try git(["-c", "credential.helper=rsakit", "clone", "-q", url, path("c1")]).status, 0)
        try rsakitOK(
            ["internet-password", "add", "--url", "http://erin@127.0.0.1:\(port)"], stdin: Array("pa55-w0rd".utf8))
        let cloned = try git(["-c", "credential.helper=rsakit", "clone", "-q", url, path("c2")])
        XCTAssertEqual(cloned.status, 0, cloned.stderr)
        XCTAssertEqual(try git(["-C", path("c2"), "log", "--format=%s"]).stdoutText, "first commit\n")
    }
}
