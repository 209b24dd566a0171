import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process for the tests: started with posix_spawn(3), reaped with waitpid(2), and
/// never waited on without a deadline.
///
/// Foundation's `Process` is not used in the tests. Its `waitUntilExit()` depends on Foundation's
/// manager thread delivering the child's exit to a run loop, and on Linux that wait has been
/// seen to hang for ever (swift-corelibs-foundation #5153, swift #79881). A CI run once went
/// past its 90-minute limit inside the ThreadSanitizer step with no test named, most likely a
/// hang of that kind (it did not happen again here in three runs). Here the parent
/// polls `waitpid(pid, WNOHANG)` itself, and a child that outlives its deadline is killed
/// (SIGKILL). The wait then throws ``ChildProcessError/timedOut(command:seconds:)`` naming the
/// command, so a hang costs one test and says where it was.
///
/// The child gets default signal dispositions and an empty signal mask, and inherits no
/// descriptor above 2 (posix_spawn_file_actions_addclosefrom_np). Its streams are /dev/null,
/// a file, or a descriptor the caller owns (a FIFO or pipe end), chosen by ``Stream``.
package final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    package enum Stream {
        /// /dev/null.
        case null
        /// stdin: read from the file at the path. stdout/stderr: the file is created or
        /// truncated (mode 0600) and written.
        case file(String)
        /// Appended to the file at the path, created if missing (mode 0600). For stdout and
        /// stderr sharing one log.
        case appending(String)
        /// A descriptor the caller owns, duplicated onto the stream (dup2). The caller closes
        /// its own copy when it wants the child to see end of file.
        case descriptor(Int32)
    }

    /// How the child ended.
    package enum Termination: Equatable, CustomStringConvertible {
        /// exit(status): 0...255.
        case exited(Int32)
        /// Killed by the signal with this number.
        case signaled(Int32)

        /// The exit status, or 128 + the signal number (the shell's convention).
        package var status: Int32 {
            switch self {
            case .exited(let status): return status
            case .signaled(let signal): return 128 + signal
            }
        }

        package var description: String {
            switch self {
            case .exited(let status): return "exit status \(status)"
            case .signaled(let signal): return "signal \(signal)"
            }
        }
    }

    /// The deadline for one child, in seconds, when the caller gives none: the value of
    /// `RSAKIT_TEST_PROCESS_TIMEOUT`, else 300. Under ThreadSanitizer the slowest CLI child
    /// (a 5 MiB encryption) takes about 20 s.
    package static var defaultTimeout: Double {
        ProcessInfo.processInfo.environment["RSAKIT_TEST_PROCESS_TIMEOUT"].flatMap(Double.init) ?? 300
    }

    /// The process ID.
    package let pid: pid_t
    /// The executable and arguments, for messages.
    package let command: [String]
    private let lock = NSLock()
    private var termination: Termination?

    /// Start `command[0]` (an absolute path) with the arguments `command[1...]`.
    ///
    /// - Parameters:
    ///   - environment: the whole environment of the child; nil passes the parent's on.
    ///   - directory: the child's working directory; nil keeps the parent's.
    /// - Throws: ``ChildProcessError/spawnFailed(command:errno:)`` when posix_spawn fails
    ///   (no such executable, a stream file that cannot be opened...).
    package init(
        _ command: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        precondition(!command.isEmpty, "ChildProcess needs an executable")
        self.command = command
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                let flags = fd == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
                posix_spawn_file_actions_addopen(&actions, fd, path, flags, 0o600)
            case .appending(let path):
                posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            case .descriptor(let source):
                posix_spawn_file_actions_adddup2(&actions, source, fd)
            }
        }
        // glibc declares these two only with _GNU_SOURCE, which Swift's Glibc module does not
        // define, so they are looked up at run time (addchdir_np since glibc 2.29, addclosefrom_np
        // since 2.34).
        if let closeFrom = GlibcSpawnExtensions.addCloseFrom { _ = closeFrom(&actions, 3) }
        if let directory {
            guard let addChdir = GlibcSpawnExtensions.addChdir else {
                throw ChildProcessError.spawnFailed(command: command, errno: ENOSYS)
            }
            _ = addChdir(&actions, directory)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let environmentStrings = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = command.map { strdup($0) } + [nil]
        let envp = environmentStrings.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
        guard code == 0 else { throw ChildProcessError.spawnFailed(command: command, errno: code) }
        self.pid = pid
    }

    /// The termination if the child has ended (it is reaped then), or nil while it runs.
    /// Never blocks.
    package func poll() -> Termination? {
        lock.lock()
        defer { lock.unlock() }
        if let termination { return termination }
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        // ECHILD would mean someone else reaped it: stop loudly rather than wait for ever.
        precondition(reaped != -1 || errno == EINTR, "waitpid(\(pid)): \(String(cString: strerror(errno)))")
        guard reaped == pid else { return nil }
        let signal = status & 0x7F
        termination = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
        return termination
    }

    /// True while the child has not ended.
    package var isRunning: Bool { poll() == nil }

    /// Wait at most `timeout` seconds for the child to end and return how it ended.
    ///
    /// - Throws: ``ChildProcessError/timedOut(command:seconds:)`` when the deadline passes;
    ///   the child has then been killed (SIGKILL) and reaped.
    @discardableResult
    package func wait(timeout: Double = ChildProcess.defaultTimeout) throws -> Termination {
        let deadline = Date().addingTimeInterval(timeout)
        var pause: UInt32 = 500
        while true {
            if let termination = poll() { return termination }
            if Date() >= deadline {
                kill9()
                throw ChildProcessError.timedOut(command: command, seconds: timeout)
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// Send `signal` to the child (a no-op once it has been reaped).
    package func send(_ signal: Int32) {
        guard poll() == nil else { return }
        kill(pid, signal)
    }

    /// Kill the child (SIGKILL) if it still runs, and reap it.
    package func kill9() {
        send(SIGKILL)
        while poll() == nil { usleep(1_000) }
    }

    deinit {
        kill9()  // never leave a child running, or a zombie, behind a test
    }
}

/// posix_spawn_file_actions_addclosefrom_np(3) and posix_spawn_file_actions_addchdir_np(3),
/// found with dlsym(3); nil where this glibc lacks one.
private enum GlibcSpawnExtensions {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias AddChdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    static let addCloseFrom: AddCloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    static let addChdir: AddChdir? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<T>(_ name: String) -> T? {
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(address, to: T.self)
    }
}

/// Why a ``ChildProcess`` could not be started or waited for.
package enum ChildProcessError: Error, CustomStringConvertible {
    /// posix_spawn failed with this errno.
    case spawnFailed(command: [String], errno: Int32)
    /// The child was still running at its deadline and was killed.
    case timedOut(command: [String], seconds: Double)

    package var description: String {
        switch self {
        case .spawnFailed(let command, let code):
            return "could not start \(command.joined(separator: " ")): \(String(cString: strerror(code)))"
        case .timedOut(let command, let seconds):
            let shown = seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)"
            return "\(command.joined(separator: " ")) was still running after \(shown) s and was killed"
        }
    }
}

/// What ``ChildProcess/run(_:stdin:stdinFile:environment:directory:timeout:)`` collected.
package struct ChildProcessResult {
    /// How the child ended.
    package let termination: ChildProcess.Termination
    /// Everything the child wrote to stdout.
    package let stdout: [UInt8]
    /// Everything the child wrote to stderr, decoded as UTF-8 (invalid bytes replaced).
    package let stderr: String
    /// The exit status, or 128 + the signal number.
    package var status: Int32 { termination.status }
    /// stdout decoded as UTF-8.
    package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

extension ChildProcess {
    /// A child whose stdout and stderr go to files in the test scratch folder (no pipe to fill
    /// up), for helpers that report progress while they run. The files are removed with it.
    package final class Captured {
        /// The running child.
        package let process: ChildProcess
        private let outPath: String
        private let errPath: String

        fileprivate init(process: ChildProcess, outPath: String, errPath: String) {
            (self.process, self.outPath, self.errPath) = (process, outPath, errPath)
        }

        /// What the child has written to stdout so far.
        package var stdoutSoFar: [UInt8] {
            [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: outPath))) ?? Data())
        }

        /// Wait at most `timeout` seconds until the child's stdout starts with `text`; false
        /// when it has not by then (or the child ended without writing it).
        package func waitForStdout(startingWith text: String, timeout: Double = 60) -> Bool {
            let expected = Array(text.utf8)
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if stdoutSoFar.starts(with: expected) { return true }
                if !process.isRunning { break }
                usleep(2_000)
            }
            return stdoutSoFar.starts(with: expected)
        }

        /// Wait for the child to end (at most `timeout` seconds) and return what it wrote.
        ///
        /// - Throws: ``ChildProcessError/timedOut(command:seconds:)``.
        package func finish(timeout: Double = ChildProcess.defaultTimeout) throws -> ChildProcessResult {
            let termination = try process.wait(timeout: timeout)
            let err = (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data()
            return ChildProcessResult(
                termination: termination, stdout: stdoutSoFar,
                stderr: String(decoding: err, as: UTF8.self))
        }

        deinit {
            unlink(outPath)
            unlink(errPath)
        }
    }

    /// Start `command` with stdout and stderr captured in scratch files (see ``Captured``).
    ///
    /// - Throws: ``ChildProcessError/spawnFailed(command:errno:)``.
    package static func start(
        _ command: [String], stdin: Stream = .null, environment: [String: String]? = nil,
        directory: String? = nil
    ) throws -> Captured {
        let base = TestScratch.directory.appendingPathComponent("child-\(UUID().uuidString)").path
        let child = try ChildProcess(
            command, environment: environment, directory: directory,
            stdin: stdin, stdout: .file(base + ".out"), stderr: .file(base + ".err"))
        return Captured(process: child, outPath: base + ".out", errPath: base + ".err")
    }

    /// Run `command` to its end and collect its output. stdin is `stdin`'s bytes (or the file
    /// `stdinFile`, or /dev/null when both are nil); stdout and stderr go to scratch files and
    /// are read back (``Captured``).
    ///
    /// - Throws: ``ChildProcessError`` (the child could not start, or outlived `timeout`
    ///   seconds), or a file-system error from writing `stdin` to a scratch file.
    package static func run(
        _ command: [String], stdin: [UInt8]? = nil, stdinFile: String? = nil,
        environment: [String: String]? = nil, directory: String? = nil,
        timeout: Double = ChildProcess.defaultTimeout
    ) throws -> ChildProcessResult {
        var input = ChildProcess.Stream.null
        var inputCopy: String?
        defer { if let inputCopy { unlink(inputCopy) } }
        if let stdinFile {
            input = .file(stdinFile)
        } else if let stdin {
            let path = TestScratch.directory.appendingPathComponent("child-\(UUID().uuidString).in").path
            try Data(stdin).write(to: URL(fileURLWithPath: path))
            (input, inputCopy) = (.file(path), path)
        }
        return try start(command, stdin: input, environment: environment, directory: directory).finish(timeout: timeout)
    }

    /// Run `command` to its end with stdin from /dev/null and stdout and stderr appended to one
    /// scratch log, in the order the child wrote them (a report and the lines around it stay
    /// together, as valgrind prints them), and return the exit status and that log.
    ///
    /// - Returns: `status` is the exit status or 128 + the signal number; `output` is the log
    ///   decoded as UTF-8 (invalid bytes replaced). The log is removed.
    /// - Throws: ``ChildProcessError`` (the child could not start, or outlived `timeout` seconds).
    package static func runMerged(
        _ command: [String], environment: [String: String]? = nil,
        timeout: Double = ChildProcess.defaultTimeout
    ) throws -> (status: Int32, output: String) {
        let log = TestScratch.directory.appendingPathComponent("child-\(UUID().uuidString).log").path
        defer { unlink(log) }
        let child = try ChildProcess(
            command, environment: environment, stdout: .appending(log), stderr: .appending(log))
        let termination = try child.wait(timeout: timeout)
        let output = (try? Data(contentsOf: URL(fileURLWithPath: log))) ?? Data()
        return (termination.status, String(decoding: output, as: UTF8.self))
    }
}
