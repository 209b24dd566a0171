import Foundation
import XCTest

/// Issue 9 §2 with a real pseudo-terminal (util-linux `script`): binary ciphertext is never
/// written to a terminal; progress is shown on a terminal and never elsewhere.
final class CLITerminalTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try rsakitOK(["genpair", "--tag", "tty", "--bits", "1024"])
    }

    /// Run rsakit with stdin, stdout and stderr on a new pseudo-terminal; returns the
    /// terminal's transcript and rsakit's exit status.
    func onTerminal(_ arguments: [String]) throws -> (status: Int32, transcript: String) {
        guard let script = ["/usr/bin/script", "/bin/script"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw XCTSkip("util-linux `script` not found: no pseudo-terminal for the terminal tests")
        }
        let command = ([Self.binary.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let result = try runProcess(script, ["-qec", command, "/dev/null"])
        return (result.status, result.stdoutText)
    }

    func testBinaryCiphertext_IsRefusedOnATerminal_ArmorIsAllowed() throws {
        let plain = try write(Array("to the terminal".utf8), to: "plain.txt")
        let refused = try onTerminal(["encrypt", "--tag", "tty", "--in", plain])
        XCTAssertEqual(refused.status, 64, refused.transcript)
        XCTAssertTrue(refused.transcript.contains("refusing to write binary ciphertext to a terminal; add --armor (-a), give --out FILE (-o)"), refused.transcript)
        let raw = try onTerminal(["encrypt", "--tag", "tty", "--raw", "--in", plain])
        XCTAssertEqual(raw.status, 64, raw.transcript)
        let armored = try onTerminal(["encrypt", "--tag", "tty", "--armor", "--in", plain])
        XCTAssertEqual(armored.status, 0, armored.transcript)
        XCTAssertTrue(armored.transcript.contains("-----BEGIN RSAKIT MESSAGE-----"), armored.transcript)
        // Not a terminal: binary to a pipe or file is fine.
        XCTAssertEqual(try rsakitOK(["encrypt", "--tag", "tty", "--in", plain]).stdout.count, 64 + 128, "container v2: 64-byte header, one 128-byte block")
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
        XCTAssertEqual(try onTerminal(["encrypt", "--tag", "tty", "--in", small, "--out", path("small.rsa")]).transcript, "")
    }
}
