import Foundation
import XCTest

/// With a real pseudo-terminal (util-linux `script`): binary ciphertext is never
/// written to a terminal; progress is shown on a terminal and never elsewhere.
final class CLITerminalTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try rsakitOK(["genpair", "--tag", "tty", "--bits", "1024"])
    }

    /// Run rsakit with stdin, stdout and stderr on a new pseudo-terminal; returns the
    /// terminal's transcript and rsakit's exit status.
    func onTerminal(_ arguments: [String]) throws -> (status: Int32, transcript: String) {
        guard
            let script = ["/usr/bin/script", "/bin/script"].first(where: FileManager.default.isExecutableFile(atPath:))
        else {
            throw XCTSkip("util-linux `script` not found: no pseudo-terminal for the terminal tests")
        }
        let command = ([Self.binary.path] + arguments).map {
            "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }.joined(separator: " ")
        let result = try runProcess(script, ["-qec", command, "/dev/null"])
        return (result.status, result.stdoutText)
    }

    func testBinaryCiphertext_IsRefusedOnATerminal_ArmorIsAllowed() throws {
        let plain = try write(Array("to the terminal".utf8), to: "plain.txt")
        let refused = try onTerminal(["encrypt", "--tag", "tty", "--in", plain])
        XCTAssertEqual(refused.status, 64, refused.transcript)
        XCTAssertTrue(
            refused.transcript.contains(
                "refusing to write binary ciphertext to a terminal; add --armor (-a), give --out FILE (-o)"),
            refused.transcript)
        let raw = try onTerminal(["encrypt", "--tag", "tty", "--raw", "--in", plain])
        XCTAssertEqual(raw.status, 64, raw.transcript)
        let armored = try onTerminal(["encrypt", "--tag", "tty", "--armor", "--in", plain])
        XCTAssertEqual(armored.status, 0, armored.transcript)
        XCTAssertTrue(armored.transcript.contains("-----BEGIN RSAKIT MESSAGE-----"), armored.transcript)
        // Not a terminal: binary to a pipe or file is fine.
        XCTAssertEqual(
            try rsakitOK(["encrypt", "--tag", "tty", "--in", plain]).stdout.count, 64 + 128,
            "container v2: 64-byte header, one 128-byte block")
    }

    /// `--value` ends with a newline on a terminal only (as `security -w`); a value typed twice
    /// that differs is reported as values, not passphrases.
    func testPasswordValue_NewlineOnATerminalOnly_MismatchNamesValues() throws {
        try rsakitOK(["password", "add", "--service", "s", "--account", "a"], stdin: Array("v4lue".utf8))
        let shown = try onTerminal(["password", "find", "--service", "s", "--account", "a", "--value"])
        XCTAssertEqual(shown.status, 0, shown.transcript)
        XCTAssertEqual(shown.transcript, "v4lue\r\n", "the terminal shows the newline as CR LF")
        XCTAssertEqual(
            try rsakitOK(["password", "find", "--service", "s", "--account", "a", "--value"]).stdoutText, "v4lue",
            "a pipe gets the bytes alone")
        // Each answer typed once its prompt is on the terminal (typed-ahead input is flushed
        // when the prompt turns echo off), by a pseudo-terminal of python3's pty module.
        let answering = #"""
            import os, pty, select, sys
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            answers, seen = [b"one\n", b"two\n"], b""
            while select.select([fd], [], [], 30)[0]:
                try:
                    data = os.read(fd, 1024)
                except OSError:
                    break
                if not data:
                    break
                seen += data
                if answers and seen.count(b"Password value: ") == 3 - len(answers):
                    os.write(fd, answers.pop(0))
            sys.stdout.buffer.write(seen)
            sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
            """#
        let typed = try runProcess(
            "/usr/bin/env",
            ["python3", "-c", answering, Self.binary.path, "password", "add", "--service", "s", "--account", "b"])
        XCTAssertEqual(typed.status, 65, typed.stdoutText)
        XCTAssertTrue(typed.stdoutText.contains("the values entered do not match"), typed.stdoutText)
    }

    func testProgress_OnATerminalOnly_QuietTurnsItOff() throws {
        let big = try write(testBytes(5 << 20), to: "big.bin")
        let shown = try onTerminal(["encrypt", "--tag", "tty", "--in", big, "--out", path("big.rsa")])
        XCTAssertEqual(shown.status, 0, shown.transcript)
        XCTAssertTrue(shown.transcript.contains("\rrsakit: encrypted "), shown.transcript)
        XCTAssertTrue(shown.transcript.contains("of 5.0 MiB (100%)"), shown.transcript)
        XCTAssertTrue(shown.transcript.contains("/s"), shown.transcript)
        let quiet = try onTerminal(["encrypt", "--tag", "tty", "--in", big, "--out", path("quiet.rsa"), "--quiet"])
        XCTAssertEqual(quiet.status, 0, quiet.transcript)
        XCTAssertEqual(quiet.transcript, "", "--quiet: nothing on the terminal")
        // stderr a file: no progress at all, whatever the size.
        let piped = try rsakitOK(["encrypt", "--tag", "tty", "--in", big, "--out", path("piped.rsa")])
        XCTAssertEqual(piped.stderr, "")
        XCTAssertEqual(try read("piped.rsa").count, try read("big.rsa").count)
        // Small work shows nothing even on a terminal.
        let small = try write([1, 2, 3], to: "small.bin")
        XCTAssertEqual(
            try onTerminal(["encrypt", "--tag", "tty", "--in", small, "--out", path("small.rsa")]).transcript, "")
    }

    /// Ctrl-C during a long encryption on a terminal: the progress line (redrawn with "\r",
    /// no newline) gets its newline before the process dies, so the shell's prompt starts on
    /// a line of its own; the output file is not left behind. Driven through python3's pty
    /// module: it sends SIGINT once the progress line shows, then reads the rest.
    func testProgress_CtrlCEndsTheLine() throws {
        let interrupting = """
            import os, pty, select, signal, sys, time
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            out, deadline, sent = b"", time.time() + 60, False
            while time.time() < deadline:
                ready, _, _ = select.select([fd], [], [], 0.2)
                if ready:
                    try:
                        chunk = os.read(fd, 4096)
                    except OSError:
                        break
                    if not chunk:
                        break
                    out += chunk
                if not sent and b"rsakit: encrypted" in out:
                    os.kill(pid, signal.SIGINT)
                    sent = True
            _, status = os.waitpid(pid, 0)
            sys.stdout.write(repr(out) + "\\n" + str(os.WIFSIGNALED(status) and os.WTERMSIG(status)) + "\\n")
            """
        let result = try runProcess(
            "/usr/bin/env",
            [
                "python3", "-c", interrupting, Self.binary.path, "encrypt", "--tag", "tty",
                "--in", "/dev/zero", "--out", path("endless.rsa")
            ])
        let lines = result.stdoutText.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, result.stdoutText + result.stderr)
        let transcript = String(lines.first ?? "")
        XCTAssertTrue(transcript.contains("rsakit: encrypted"), transcript)
        XCTAssertTrue(
            transcript.hasSuffix("\\x1b[K\\r\\n'"),
            "the progress line did not get its newline: \(transcript.suffix(80))")
        XCTAssertEqual(lines.last, "2", "rsakit did not end by SIGINT")
        XCTAssertFalse(exists("endless.rsa"))
    }
}
