import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
import RSAKitTestSupport

/// Passphrases without a terminal, through the built binary: `agent start` and `agent unlock`
/// run in a session of their own (setsid: no controlling terminal, standard input not a
/// terminal) ask GnuPG's real pinentry-tty on a pseudo-terminal, a scripted Assuan peer
/// (Fixtures/fake-pinentry.sh) and an askpass program (Fixtures/fake-askpass.sh). One retry
/// after a wrong passphrase, then the usual failure; a cancel is an error of its own; the
/// passphrase is in no process's argv or environment.
final class CLIPassphraseProgramTests: CLITestCase {
    /// Holds a "%", which pinentry sends as "%25" (Assuan's escaping).
    private let passphrase = "agent%pass-7f3a"
    private var socket: String { path("run/agent.sock") }
    private var agentPIDs: [Int32] = []
    private static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures")

    override func tearDownWithError() throws {
        for pid in agentPIDs { kill(pid, SIGKILL) }
        try super.tearDownWithError()
    }

    /// No passphrase source, no program inherited from the test's own environment.
    private func environment(_ changes: [String: String?] = [:]) -> [String: String?] {
        var base: [String: String?] = [
            "RSAKIT_AGENT_SOCK": socket, "RSAKIT_STORE_PASSIN": nil, "RSAKIT_PASSIN": nil, "RSAKIT_PINENTRY": nil,
            "RSAKIT_ASKPASS": nil, "SSH_ASKPASS": nil, "SSH_ASKPASS_REQUIRE": nil, "DISPLAY": nil,
            "WAYLAND_DISPLAY": nil,
            "GPG_TTY": nil
        ]
        for (name, value) in changes { base[name] = value }
        return base
    }

    /// A protected store holding one password.
    private func protectedStore() throws {
        try rsakitOK(["password", "add", "--service", "svc", "--account", "a"], stdin: Array("pw-value-1".utf8))
        try rsakitOK(
            ["store", "protect", "--kdf", "interactive", "--store-passin", "env:PROGRAM_TEST_PASS"],
            environment: ["PROGRAM_TEST_PASS": passphrase])
    }

    /// rsakit in a new session (`setsid -w`): no controlling terminal, standard input empty.
    private func detached(_ arguments: [String], _ changes: [String: String?]) throws -> Result {
        let setsid = try XCTUnwrap(
            ["/usr/bin/setsid", "/bin/setsid"].first(where: FileManager.default.isExecutableFile(atPath:)),
            "util-linux setsid is needed")
        return try runProcess(setsid, ["-w", Self.binary.path] + arguments, environment: environment(changes))
    }

    /// The agent's pid from `agent start`'s output, remembered for tear-down.
    private func agentPID(_ started: Result) throws -> Int32 {
        let text = started.stdoutText
        XCTAssertTrue(
            text.hasPrefix("RSAKIT_AGENT_SOCK=\(socket); export RSAKIT_AGENT_SOCK;\necho Agent pid "),
            text + started.stderr)
        let pid = try XCTUnwrap(Int32(text.split(separator: " ").last?.dropLast(2) ?? ""), text + started.stderr)
        agentPIDs.append(pid)
        return pid
    }

    /// The agent serves the store: a secret without any passphrase source; then it is stopped.
    private func assertAgentServesThenStop(_ pid: Int32, file: StaticString = #filePath, line: UInt = #line) throws {
        let value = try rsakit(
            ["password", "find", "--service", "svc", "--account", "a", "--value"], environment: environment())
        XCTAssertEqual(value.stdoutText, "pw-value-1", value.stderr, file: file, line: line)
        // Neither the agent's argv nor its environment holds the passphrase.
        let cmdline = String(decoding: try read("/proc/\(pid)/cmdline"), as: UTF8.self)
        XCTAssertTrue(cmdline.contains("agent\u{0}serve"), cmdline, file: file, line: line)
        XCTAssertFalse(cmdline.contains(passphrase), file: file, line: line)
        XCTAssertFalse(
            String(decoding: (try? read("/proc/\(pid)/environ")) ?? [], as: UTF8.self).contains(passphrase), file: file,
            line: line)
        try rsakitOK(["agent", "stop"], environment: environment(), file: file, line: line)
    }

    func testPinentryTTY_OnAPseudoTerminal_StartsTheAgentWithNoControllingTerminal() throws {
        let pinentry = "/usr/bin/pinentry-tty"
        guard FileManager.default.isExecutableFile(atPath: pinentry) else {
            throw XCTSkip("pinentry-tty is not installed (scripts/install-deps.sh installs it)")
        }
        try protectedStore()
        // The driver: a pseudo-terminal that rsakit's session does not own (GPG_TTY names it,
        // as for gpg-agent), the passphrase typed once pinentry-tty's prompt shows on it.
        let driver = #"""
            import os, select, subprocess, sys, time
            master, slave = os.openpty()
            env = dict(os.environ, GPG_TTY=os.ttyname(slave))
            child = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, start_new_session=True)
            seen, deadline = b"", time.time() + 20
            while b"Passphrase:" not in seen and time.time() < deadline:
                if select.select([master], [], [], 0.2)[0]:
                    seen += os.read(master, 1024)
            os.write(master, sys.argv[1].encode() + b"\r")
            out, err = child.communicate(timeout=20)
            sys.stdout.write("status %d\n--- terminal\n%s\n--- stdout\n%s--- stderr\n%s" % (
                child.returncode, seen.decode(errors="replace"), out.decode(), err.decode()))
            """#
        let run = try runProcess(
            "/usr/bin/python3", ["-c", driver, passphrase, Self.binary.path, "agent", "start"],
            environment: environment(["RSAKIT_PINENTRY": pinentry]))
        let transcript = run.stdoutText
        XCTAssertTrue(transcript.hasPrefix("status 0\n"), transcript + run.stderr)
        // pinentry-tty showed our description (the store's path) and its prompt on the terminal.
        XCTAssertTrue(transcript.contains("Passphrase for the key store at \(storeDirectory.path)"), transcript)
        XCTAssertFalse(transcript.contains(passphrase), "echo is off: the passphrase is not on the terminal")
        XCTAssertTrue(
            transcript.contains("--- stdout\nRSAKIT_AGENT_SOCK=\(socket); export RSAKIT_AGENT_SOCK;\necho Agent pid "),
            transcript)
        let line = try XCTUnwrap(
            transcript.range(of: "echo Agent pid [0-9]+;", options: .regularExpression), transcript)
        let pid = try XCTUnwrap(Int32(transcript[line].dropFirst(15).dropLast()), transcript)
        agentPIDs.append(pid)
        try assertAgentServesThenStop(pid)
    }

    func testScriptedPinentry_WrongThenRight_TwoWrongFail_Cancel_Unlock() throws {
        try protectedStore()
        let answers = path("pinentry-answers"), log = path("pinentry.log")
        let program: [String: String?] = [
            "RSAKIT_PINENTRY": Self.fixtures.appendingPathComponent("fake-pinentry.sh").path,
            "FAKE_PINENTRY_ANSWERS": answers, "FAKE_PINENTRY_LOG": log
        ]
        func answering(_ lines: [String]) throws {
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: answers))
            try? FileManager.default.removeItem(atPath: log)
        }
        let escaped = passphrase.replacingOccurrences(of: "%", with: "%25")
        // A wrong passphrase, then the right one: one dialog, the second GETPIN after SETERROR.
        try answering(["not-it", escaped])
        let started = try detached(["agent", "start"], program)
        let pid = try agentPID(started)
        let commands = String(decoding: try read(log), as: UTF8.self)
        XCTAssertEqual(commands.components(separatedBy: "\n").filter { $0 == "GETPIN" }.count, 2, commands)
        XCTAssertTrue(
            commands.contains(
                "SETDESC Passphrase for the key store at \(storeDirectory.path)\nSETPROMPT Passphrase:\nGETPIN\n"),
            commands)
        XCTAssertTrue(commands.contains("SETERROR Wrong passphrase; try again.\nGETPIN\nBYE\n"), commands)
        XCTAssertFalse(commands.contains(passphrase))
        try assertAgentServesThenStop(pid)
        // Two wrong ones: the usual wrong-passphrase failure (65), no agent left.
        try answering(["not-it", "nor-this"])
        assertFailure(
            try detached(["agent", "start"], program), status: 65,
            contains: "wrong passphrase for the key store at \(storeDirectory.path)")
        XCTAssertFalse(exists(socket), "no agent listens after two wrong passphrases")
        // Cancel: an error of its own, exit 1, no agent.
        try answering(["CANCEL"])
        assertFailure(
            try detached(["agent", "start"], program), status: 1,
            contains: "the passphrase dialog was cancelled (pinentry ")
        XCTAssertFalse(exists(socket))
        // agent unlock asks the same way: a locked agent takes the key again after a retry.
        try answering([escaped])
        let second = try agentPID(try detached(["agent", "start"], program))
        try rsakitOK(["agent", "lock"], environment: environment())
        try answering(["still-not-it", escaped])
        XCTAssertEqual(try detached(["agent", "unlock"], program).stdoutText, "agent unlocked\n")
        XCTAssertEqual(
            String(decoding: try read(log), as: UTF8.self).components(separatedBy: "\n").filter { $0 == "GETPIN" }
                .count, 2)
        try assertAgentServesThenStop(second)
        // `pinentry` found on PATH, with no terminal: asked when it has somewhere to draw
        // (GPG_TTY, passed on as OPTION ttyname), not run at all otherwise.
        let bin = path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: bin + "/pinentry",
            withDestinationPath: Self.fixtures.appendingPathComponent("fake-pinentry.sh").path)
        var found = program
        found["RSAKIT_PINENTRY"] = .some(nil)
        found["PATH"] = bin + ":/usr/bin:/bin"
        try answering([escaped])
        let third = try agentPID(
            try detached(["agent", "start"], found.merging(["GPG_TTY": "/dev/pts/rsakit-test"]) { $1 }))
        XCTAssertTrue(String(decoding: try read(log), as: UTF8.self).hasPrefix("OPTION ttyname=/dev/pts/rsakit-test\n"))
        try assertAgentServesThenStop(third)
        try answering([escaped])
        assertFailure(try detached(["agent", "start"], found), status: 64, contains: "there is no terminal to ask on")
        XCTAssertFalse(exists(log), "a found pinentry with nowhere to draw is not run")
    }

    func testAskpass_WrongThenRight_TwoWrongFail_Cancel_SSHAskpassRule() throws {
        try protectedStore()
        let answers = path("askpass-answers"), log = path("askpass.log")
        let script = Self.fixtures.appendingPathComponent("fake-askpass.sh").path
        func answering(_ lines: [String]) throws {
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: answers))
            try? FileManager.default.removeItem(atPath: log)
        }
        let program: [String: String?] = [
            "RSAKIT_ASKPASS": script, "FAKE_ASKPASS_ANSWERS": answers, "FAKE_ASKPASS_LOG": log
        ]
        let prompt = "Passphrase for the key store at \(storeDirectory.path): "
        try answering(["not-it", passphrase])
        let pid = try agentPID(try detached(["agent", "start"], program))
        XCTAssertEqual(
            String(decoding: try read(log), as: UTF8.self),
            prompt + "\n" + "Wrong passphrase; try again. " + prompt + "\n",
            "the prompt is the program's one argument; the retry says why")
        try assertAgentServesThenStop(pid)
        try answering(["not-it", "nor-this"])
        assertFailure(
            try detached(["agent", "start"], program), status: 65, contains: "wrong passphrase for the key store")
        XCTAssertFalse(exists(socket))
        try answering(["CANCEL"])
        assertFailure(
            try detached(["agent", "start"], program), status: 1,
            contains: "the passphrase prompt was cancelled (askpass ")
        XCTAssertFalse(exists(socket))
        // SSH_ASKPASS as ssh uses it: with no terminal and a display, asked; without a display
        // (and no terminal for a pinentry to draw on), nothing can ask: the usual usage error.
        // (A bare name, looked up in PATH, as ssh runs it.)
        let ssh: [String: String?] = [
            "SSH_ASKPASS": "fake-askpass.sh", "PATH": Self.fixtures.path + ":/usr/bin:/bin",
            "FAKE_ASKPASS_ANSWERS": answers, "FAKE_ASKPASS_LOG": log
        ]
        try answering([passphrase])
        let viaSSH = try agentPID(try detached(["agent", "start"], ssh.merging(["DISPLAY": ":97"]) { $1 }))
        try assertAgentServesThenStop(viaSSH)
        try answering([passphrase])
        assertFailure(
            try detached(["agent", "start"], ssh), status: 64,
            contains: "there is no terminal to ask on; give --store-passin SPEC or RSAKIT_STORE_PASSIN")
        XCTAssertFalse(exists(log), "SSH_ASKPASS is not run without a display")
    }
}
