import Foundation
import XCTest
import RSAKitTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Process hardening, observed for real: a running `rsakit decrypt` (blocked reading a FIFO the test
/// holds open, with a private key file given) is not dumpable and has a core-file limit of 0,
/// while a control process started the same way (`cat` on another FIFO) is dumpable and keeps
/// the raised limit, so the observation cannot pass vacuously.
///
/// How it is observed from outside: `/proc/PID/limits` ("Max core file size"), and the owner
/// of `/proc/PID` - the kernel gives a non-dumpable process's /proc entries to root
/// (proc(5), PR_SET_DUMPABLE in prctl(2)). That needs the processes to run as a non-root user,
/// so as root the test starts them as `nobody` with setpriv(1).
final class CLIHardeningTests: CLITestCase {
    func testDecrypt_DisablesCoreDumpsWhileRunning() throws {
        guard FileManager.default.fileExists(atPath: "/proc/self/limits") else {
            throw XCTSkip("no /proc: process hardening is observed through /proc/PID on Linux")
        }
        var runAs: [String] = []
        var expectedUID = getuid()
        if getuid() == 0 {
            guard let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(where: FileManager.default.isExecutableFile)
            else {
                throw XCTSkip(
                    "running as root and setpriv(1) is missing: cannot start the processes as a non-root user")
            }
            runAs = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
            expectedUID = 65534
        }
        // Readable by `nobody`: the work folder, a throwaway key made here, two FIFOs.
        chmod(workDirectory.path, 0o755)
        let key = path("key.pem")
        let made = try runProcess(
            try openssl(), ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", key])
        XCTAssertEqual(made.status, 0, made.stderr)
        chmod(key, 0o644)
        let fifo = path("ciphertext.fifo"), controlFifo = path("control.fifo")
        XCTAssertEqual(mkfifo(fifo, 0o666), 0)
        XCTAssertEqual(mkfifo(controlFifo, 0o666), 0)

        // Raise the soft core limit to the hard one first, so that 0 in rsakit is its own doing.
        let launcher = ["/bin/sh", "-c", "ulimit -S -c \"$(ulimit -H -c)\"; exec \"$@\"", "sh"] + runAs
        let rsakit = try start(
            launcher + [Self.binary.path, "decrypt", "--key", key, "--in", fifo, "--store", storeDirectory.path])
        let control = try start(launcher + ["/bin/cat", controlFifo])
        // Opening the write ends waits until each process has opened its FIFO for reading.
        let writer = open(fifo, O_WRONLY), controlWriter = open(controlFifo, O_WRONLY)
        XCTAssertGreaterThanOrEqual(writer, 0)
        XCTAssertGreaterThanOrEqual(controlWriter, 0)

        let hardLimit = try coreLimit(pid: control.pid).hard
        let rsakitLimits = try coreLimit(pid: rsakit.pid)
        let controlLimits = try coreLimit(pid: control.pid)
        let rsakitOwner = try owner(pid: rsakit.pid)
        let controlOwner = try owner(pid: control.pid)

        close(writer)  // empty input: decrypt ends with "input is empty"
        close(controlWriter)
        let rsakitEnd = try rsakit.wait()
        try control.wait()

        XCTAssertEqual(rsakitLimits.soft, "0", "rsakit's soft core limit")
        XCTAssertEqual(rsakitLimits.hard, "0", "rsakit's hard core limit")
        XCTAssertEqual(rsakitOwner, 0, "/proc/PID of rsakit is owned by root only when it is not dumpable")
        XCTAssertEqual(controlOwner, expectedUID, "the control process is dumpable")
        XCTAssertEqual(controlLimits.soft, hardLimit, "the control keeps the raised limit")
        if hardLimit == "0" {
            print(
                "NOTE: the hard core limit here is 0, so the limit half of this test shows nothing; the dumpable "
                    + "half still does"
            )
        }
        XCTAssertEqual(rsakitEnd, .exited(65), "decrypt of empty input")
    }

    private func start(_ command: [String]) throws -> ChildProcess {
        try ChildProcess(command)
    }

    /// The "Max core file size" soft and hard limits from /proc/PID/limits ("0", "unlimited", ...).
    private func coreLimit(pid: Int32) throws -> (soft: String, hard: String) {
        let text = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max core file size") }) else {
            throw XCTSkip("no 'Max core file size' line in /proc/\(pid)/limits")
        }
        let fields = line.dropFirst("Max core file size".count).split(separator: " ")
        return (String(fields[0]), String(fields[1]))
    }

    private func owner(pid: Int32) throws -> uid_t {
        var info = stat()
        guard stat("/proc/\(pid)/status", &info) == 0 else { throw XCTSkip("cannot stat /proc/\(pid)") }
        return info.st_uid
    }
}

/// Inputs the CLI fuzz harness (Fuzz/Sources/FuzzCLIArguments) found, run through the binary.
final class CLIFuzzRegressionTests: CLITestCase {
    /// `--in=<value starting with a combining mark>`: "=" and the mark form one Character, so
    /// splitting at the first "=" Character missed it and the whole word became an unknown option.
    func testArguments_InlineValueStartingWithCombiningMark() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../RSAKitTests/Fixtures/fuzz/FuzzCLIArguments/combining-mark-after-equals")
        let argv = Array(try Data(contentsOf: url)).split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(argv[1], "--in=\u{34B}missing-input")
        let result = try rsakit(argv)
        XCTAssertFalse(result.stderr.contains("unknown option"), result.stderr)
        XCTAssertNotEqual(result.status, 64, result.stderr)
        XCTAssertEqual(result.status, 66, "the input file does not exist: \(result.stderr)")
        XCTAssertTrue(result.stderr.contains("\u{34B}missing-input"), result.stderr)
    }
}
