import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Child processes for the benchmark: openssl speed, the openssl peer of each case, and the
// cli case's rsakit and openssl processes. posix_spawn(3) and waitpid(2), not Foundation's
// Process, whose waitUntilExit() can hang on Linux (Tests/RSAKitTestSupport/ChildProcess.swift
// says more); the benchmark target cannot use that test-support module, which imports XCTest.

/// What a child process printed and how it ended.
struct ProcessResult {
    /// The exit status, or 128 + the signal number when a signal ended it.
    let status: Int32
    /// Everything written to stdout, decoded as UTF-8 (invalid bytes replaced).
    let stdout: String
    /// Everything written to stderr, decoded as UTF-8.
    let stderr: String
}

/// Start `executable` (an absolute path) with `arguments`, stdin from /dev/null and stdout and
/// stderr written to the files at those paths (created or truncated, mode 0600), and wait.
///
/// - Returns: the exit status, or 128 + the signal number.
/// - Throws: `BenchmarkFailure` when posix_spawn fails.
func spawnAndWait(_ executable: String, _ arguments: [String], stdout: String, stderr: String) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid = pid_t()
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard spawned == 0 else {
        throw BenchmarkFailure(description: "cannot start \(executable): \(String(cString: strerror(spawned)))")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let signal = status & 0x7F
    return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
}

/// Run `executable` with `arguments` and wait; stdout and stderr go through temporary files
/// (no pipe to fill up) that are removed afterwards.
///
/// - Throws: `BenchmarkFailure` when it cannot start.
func runProcess(_ executable: String, _ arguments: [String]) throws -> ProcessResult {
    let base = NSTemporaryDirectory() + "rsakit-benchmark-\(getpid())-\(UUID().uuidString)"
    let (outPath, errPath) = (base + ".out", base + ".err")
    defer { unlink(outPath); unlink(errPath) }
    let status = try spawnAndWait(executable, arguments, stdout: outPath, stderr: errPath)
    let read = { (path: String) in
        String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data(), as: UTF8.self)
    }
    return ProcessResult(status: status, stdout: read(outPath), stderr: read(errPath))
}
