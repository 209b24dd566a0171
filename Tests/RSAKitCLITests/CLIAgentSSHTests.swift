import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
import RSAKitTestSupport

/// `rsakit agent start --ssh` with the built binary and OpenSSH's own clients: ssh-add lists
/// the store's keys through SSH_AUTH_SOCK, ssh logs into a throw-away sshd with rsa-sha2
/// signatures made in the agent, for a protected store whose passphrase nobody types; a
/// locked agent offers nothing.
final class CLIAgentSSHTests: CLITestCase {
    private let passphrase = "agent-ssh-passphrase-51c0"
    private var socket: String { path("run/agent.sock") }
    private var sshSocket: String { path("run/agent-ssh.sock") }
    private var agentPIDs: [Int32] = []

    override func tearDownWithError() throws {
        for pid in agentPIDs { kill(pid, SIGKILL) }
        try super.tearDownWithError()
    }

    /// No passphrase source anywhere: what works, works through the agent.
    private var agentEnvironment: [String: String?] {
        [
            "RSAKIT_AGENT_SOCK": socket, "SSH_AUTH_SOCK": sshSocket, "RSAKIT_STORE_PASSIN": nil, "RSAKIT_PASSIN": nil,
            "SSH_ASKPASS": nil, "DISPLAY": nil
        ]
    }

    /// Keys `tags` (2048 bits), then the store protected.
    private func protectedStore(tags: [String]) throws {
        for tag in tags { try rsakitOK(["genpair", "--tag", tag, "--bits", "2048"]) }
        try rsakitOK(
            ["store", "protect", "--kdf", "interactive", "--store-passin", "env:AGENT_TEST_PASS"],
            environment: ["AGENT_TEST_PASS": passphrase])
    }

    /// `agent start --ssh`: both lines printed, the ssh socket 0600 beside the agent's.
    private func startAgentWithSSH() throws {
        let started = try rsakitOK(
            ["agent", "start", "--ssh", "--store-passin", "env:AGENT_TEST_PASS"],
            environment: agentEnvironment.merging(["AGENT_TEST_PASS": passphrase]) { $1 })
        let text = started.stdoutText
        XCTAssertTrue(
            text.hasPrefix(
                "RSAKIT_AGENT_SOCK=\(socket); export RSAKIT_AGENT_SOCK;\nSSH_AUTH_SOCK=\(sshSocket); export "
                    + "SSH_AUTH_SOCK;\necho Agent pid "
            ), text)
        if let pid = Int32(text.split(separator: " ").last?.dropLast(2) ?? "") { agentPIDs.append(pid) }
        var info = stat()
        XCTAssertEqual(stat(sshSocket, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(stat(path("run"), &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
    }

    /// The `ssh-rsa` line of the stored key `tag`: its exported public key through
    /// `ssh-keygen -i -m PKCS8`.
    private func sshPublicKeyLine(_ tag: String) throws -> String {
        try Data(try rsakitOK(["export", "-t", tag]).stdout).write(to: URL(fileURLWithPath: path("\(tag).pub.pem")))
        let converted = try runProcess(
            try requiredTool("ssh-keygen", package: "openssh-client"),
            ["-i", "-m", "PKCS8", "-f", path("\(tag).pub.pem")])
        XCTAssertEqual(converted.status, 0, converted.stderr)
        XCTAssertTrue(converted.stdoutText.hasPrefix("ssh-rsa "), converted.stdoutText)
        return converted.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func sshAdd(_ arguments: [String]) throws -> Result {
        try runProcess(
            "/usr/bin/timeout", ["-k", "5", "30", try requiredTool("ssh-add", package: "openssh-client")] + arguments,
            environment: agentEnvironment)
    }

    func testSSHAdd_AccessGroup_ListsOnlyThatGroupsKeys() throws {
        try rsakitOK(["genpair", "--tag", "laptop", "--bits", "1024"])
        try rsakitOK(["genpair", "--tag", "deploy", "--bits", "1024", "--access-group", "com.example.ci"])
        try rsakitOK(
            ["store", "protect", "--kdf", "interactive", "--store-passin", "env:AGENT_TEST_PASS"],
            environment: ["AGENT_TEST_PASS": passphrase])
        assertFailure(
            try rsakit(["agent", "start", "--access-group", "com.example.ci"]), status: 64,
            contains: "--access-group needs --ssh")
        let started = try rsakitOK(
            ["agent", "start", "--ssh", "--access-group", "com.example.ci", "--store-passin", "env:AGENT_TEST_PASS"],
            environment: agentEnvironment.merging(["AGENT_TEST_PASS": passphrase]) { $1 })
        if let pid = Int32(started.stdoutText.split(separator: " ").last?.dropLast(2) ?? "") { agentPIDs.append(pid) }
        let listed = try sshAdd(["-l"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertTrue(listed.stdoutText.hasSuffix(" deploy (RSA)\n"), listed.stdoutText)
        XCTAssertEqual(listed.stdoutText.split(separator: "\n").count, 1, listed.stdoutText)
        // And it signs with it: ssh-keygen -Y sign through the agent, verified by ssh-keygen.
        let keygen = try requiredTool("ssh-keygen", package: "openssh-client")
        let line = try sshPublicKeyLine("deploy")
        try Data((line + "\n").utf8).write(to: URL(fileURLWithPath: path("deploy.pub")))
        try Data("signed through the agent\n".utf8).write(to: URL(fileURLWithPath: path("msg.txt")))
        let signed = try runProcess(
            keygen, ["-Y", "sign", "-n", "file", "-f", path("deploy.pub"), path("msg.txt")],
            environment: agentEnvironment)
        XCTAssertEqual(signed.status, 0, signed.stderr)
        try Data(("deploy@test " + line + "\n").utf8).write(to: URL(fileURLWithPath: path("allowed")))
        let verified = try runProcess(
            keygen,
            [
                "-Y", "verify", "-f", path("allowed"), "-I", "deploy@test", "-n", "file",
                "-s", path("msg.txt.sig")
            ], stdin: Array("signed through the agent\n".utf8))
        XCTAssertEqual(verified.status, 0, verified.stderr + verified.stdoutText)
    }

    func testSSHAdd_ListsTheStoredKeysWithTheFingerprintsOfTheirExports_LockedListsNone() throws {
        try protectedStore(tags: ["laptop", "work"])
        try startAgentWithSSH()
        let listed = try sshAdd(["-l"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        var expected: [String] = []
        for tag in ["laptop", "work"] {
            try Data((try sshPublicKeyLine(tag) + " \(tag)\n").utf8).write(to: URL(fileURLWithPath: path("\(tag).pub")))
            // "2048 SHA256:... laptop (RSA)", as ssh-add -l prints an agent's key with its comment.
            let fingerprint = try runProcess(
                try requiredTool("ssh-keygen", package: "openssh-client"), ["-lf", path("\(tag).pub")])
            XCTAssertEqual(fingerprint.status, 0, fingerprint.stderr)
            expected.append(fingerprint.stdoutText)
        }
        XCTAssertEqual(listed.stdoutText, expected.joined(), listed.stdoutText)
        XCTAssertTrue(listed.stdoutText.contains("SHA256:"), listed.stdoutText)

        // ssh-add cannot change what the agent serves: the store does.
        let removeAll = try sshAdd(["-D"])
        XCTAssertNotEqual(removeAll.status, 0, removeAll.stdoutText)
        XCTAssertEqual(try sshAdd(["-l"]).stdoutText, expected.joined(), "still served")

        try rsakitOK(["agent", "lock"], environment: agentEnvironment)
        let locked = try sshAdd(["-l"])
        XCTAssertEqual(locked.status, 1)
        XCTAssertEqual(locked.stdoutText, "The agent has no identities.\n", locked.stderr)
    }

    func testSSH_LogsIntoThrowAwaySSHDThroughTheAgent_RSASHA2_ProtectedStoreWithoutPassphrase() throws {
        try protectedStore(tags: ["laptop"])
        // DEBUG3: sshd names the signature algorithm of each public key attempt.
        let (server, port, user, log) = try startThrowAwaySSHD(
            authorizedKeys: try sshPublicKeyLine("laptop") + " laptop\n",
            configuration: "LogLevel DEBUG3")
        defer { server.send(SIGTERM); _ = try? server.wait(timeout: 5) }
        try startAgentWithSSH()
        func ssh(_ command: String) throws -> Result {
            try runProcess(
                "/usr/bin/timeout",
                [
                    "-k", "5", "60", try requiredTool("ssh", package: "openssh-client"),
                    "-F", "/dev/null", "-p", String(port), "-o", "BatchMode=yes",
                    "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                    "-o", "IdentityAgent=\(sshSocket)", "-o", "IdentitiesOnly=no",
                    "-l", user, "127.0.0.1", command
                ], environment: agentEnvironment)
        }
        let result = try ssh("echo logged-in-through-the-ssh-agent")
        let sshdLog = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        XCTAssertEqual(result.stdoutText, "logged-in-through-the-ssh-agent\n", result.stderr + "\nsshd: " + sshdLog)
        XCTAssertTrue(sshdLog.contains("Accepted publickey for \(user)"), sshdLog)
        let attempts = sshdLog.split(separator: "\n").filter { $0.contains("attempting public key") }
        XCTAssertFalse(attempts.isEmpty, sshdLog)
        XCTAssertTrue(
            attempts.allSatisfy { $0.contains("rsa-sha2-256") || $0.contains("rsa-sha2-512") },
            attempts.joined(separator: "\n"))

        // Locked, the agent offers no key: the login fails without a prompt.
        try rsakitOK(["agent", "lock"], environment: agentEnvironment)
        let refused = try ssh("echo should-not-log-in")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertEqual(refused.stdoutText, "", refused.stderr)
        try rsakitOK(["agent", "stop"], environment: agentEnvironment)
        XCTAssertFalse(FileManager.default.fileExists(atPath: sshSocket), "stop removes the ssh socket")
    }

    func testSSHSocketOption_NeedsSSH_AndAChosenPathIsUsed() throws {
        try protectedStore(tags: ["laptop"])
        assertFailure(
            try rsakit(["agent", "start", "--ssh-socket", path("s.sock")], environment: agentEnvironment), status: 64,
            contains: "--ssh-socket needs --ssh")
        let chosen = path("ssh/chosen.sock")
        let started = try rsakitOK(
            ["agent", "start", "--ssh", "--ssh-socket", chosen, "--store-passin", "env:AGENT_TEST_PASS"],
            environment: agentEnvironment.merging(["AGENT_TEST_PASS": passphrase]) { $1 })
        if let pid = Int32(started.stdoutText.split(separator: " ").last?.dropLast(2) ?? "") { agentPIDs.append(pid) }
        XCTAssertTrue(
            started.stdoutText.contains("SSH_AUTH_SOCK=\(chosen); export SSH_AUTH_SOCK;\n"), started.stdoutText)
        var info = stat()
        XCTAssertEqual(stat(path("ssh"), &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        let listed = try runProcess(
            try requiredTool("ssh-add", package: "openssh-client"), ["-l"],
            environment: agentEnvironment.merging(["SSH_AUTH_SOCK": chosen]) { $1 })
        XCTAssertTrue(listed.stdoutText.hasSuffix(" laptop (RSA)\n"), listed.stdoutText + listed.stderr)
        try rsakitOK(["agent", "stop"], environment: agentEnvironment)
    }
}
