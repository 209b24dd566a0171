import Foundation
import XCTest
import RSAKitTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The tests' own process runner (Tests/RSAKitTestSupport/ChildProcess.swift): deadlines,
/// exit statuses, streams, and what the child inherits, with the real /bin/sh.
final class ChildProcessTests: XCTestCase {
    func testDeadline_KillsAndReapsTheChildAndNamesTheCommand() throws {
        let child = try ChildProcess(["/bin/sleep", "30"])
        let started = Date()
        XCTAssertThrowsError(try child.wait(timeout: 0.5)) { error in
            XCTAssertEqual("\(error)", "/bin/sleep 30 was still running after 0.5 s and was killed")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertEqual(child.poll(), .signaled(SIGKILL))
        XCTAssertEqual(kill(child.pid, 0), -1, "the child is gone (reaped, not a zombie)")
        XCTAssertEqual(errno, ESRCH)
    }

    func testTermination_ExitStatusAndSignal() throws {
        XCTAssertEqual(try ChildProcess(["/bin/sh", "-c", "exit 7"]).wait(), .exited(7))
        let killed = try ChildProcess(["/bin/sh", "-c", "kill -TERM $$; sleep 5"]).wait()
        XCTAssertEqual(killed, .signaled(SIGTERM))
        XCTAssertEqual(killed.status, 128 + SIGTERM)
    }

    func testRun_StreamsDirectoryAndEnvironment() throws {
        let input: [UInt8] = [0, 1, 2, 0xFF] + Array("line\n".utf8)
        let echoed = try ChildProcess.run(["/bin/sh", "-c", "cat; echo to-stderr >&2"], stdin: input)
        XCTAssertEqual(echoed.termination, .exited(0))
        XCTAssertEqual(echoed.stdout, input)
        XCTAssertEqual(echoed.stderr, "to-stderr\n")
        let placed = try ChildProcess.run(
            ["/bin/sh", "-c", "pwd; echo \"$RSAKIT_CHILD_TEST\""],
            environment: ["RSAKIT_CHILD_TEST": "value"], directory: "/tmp")
        XCTAssertEqual(placed.stdoutText, "/tmp\nvalue\n")
        XCTAssertEqual(
            try ChildProcess.run(["/bin/sh", "-c", "read x || echo eof"]).stdoutText, "eof\n", "no stdin: /dev/null")
    }

    func testChild_InheritsNoDescriptorAboveTwo() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)  // no O_CLOEXEC: inherited unless the runner closes it
        defer { close(fds[0]); close(fds[1]) }
        let script = "[ -e /proc/$$/fd/\(fds[0]) ] || [ -e /proc/$$/fd/\(fds[1]) ] && echo inherited || echo closed"
        XCTAssertEqual(try ChildProcess.run(["/bin/sh", "-c", script]).stdoutText, "closed\n")
        // The same descriptor given as a stream is the child's stdin.
        XCTAssertEqual(write(fds[1], "via-pipe\n", 9), 9)
        close(fds[1]); fds[1] = -1
        let reader = try ChildProcess.start(["/bin/sh", "-c", "read x; echo \"$x\""], stdin: .descriptor(fds[0]))
        XCTAssertEqual(try reader.finish().stdoutText, "via-pipe\n")
    }

    func testStart_WaitForStdoutSeesProgressBeforeTheEnd() throws {
        let child = try ChildProcess.start(["/bin/sh", "-c", "echo ready; sleep 30"])
        XCTAssertTrue(child.waitForStdout(startingWith: "ready\n", timeout: 10))
        XCTAssertTrue(child.process.isRunning)
        child.process.kill9()
        XCTAssertEqual(try child.finish(timeout: 1).termination, .signaled(SIGKILL))
    }
}
