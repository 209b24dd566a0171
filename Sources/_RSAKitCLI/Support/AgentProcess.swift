#if canImport(Glibc)
import Glibc
#endif
import RSAKit

/// Starting the background agent process: a fresh `rsakit agent serve` (posix_spawn, not
/// fork, so its argv and environment are clean), the passphrase written to its standard
/// input, its one-line status read from its standard output.
enum AgentProcess {
    /// The environment variables that may hold a passphrase: the rsakit ones, and any named
    /// by an `env:VAR` source in the options or variables given.
    static func environmentWithoutSecrets(_ arguments: ParsedArguments) -> [String] {
        var secret: Set<String> = ["RSAKIT_STORE_PASSIN", "RSAKIT_PASSIN", "RSAKIT_NEW_PASSIN", "RSAKIT_PASSOUT"]
        let specs =
            ["store-passin", "passin"].compactMap { arguments.value($0) }
            + secret.compactMap { getenv($0).map { String(cString: $0) } }
        for spec in specs where spec.hasPrefix("env:") { secret.insert(String(spec.dropFirst(4))) }
        var out: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            let name = String(text.prefix { $0 != "=" })
            if !secret.contains(name) { out.append(text) }
            pointer += 1
        }
        return out
    }

    /// Spawn `argv` with `environment`, write `secret` and a newline to its standard input,
    /// and return the first line it writes to its standard output (without the newline), or
    /// "" when it ends without one.
    /// - Throws: `CLIFailure` when the process cannot start.
    static func spawn(_ argv: [String], environment: [String], secret: RSASecretBytes) throws -> String {
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0]
        guard pipe(&input) == 0, pipe(&output) == 0 else {
            throw CLIFailure("cannot start the agent: pipe: \(String(cString: strerror(errno)))", .failure)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        for fd in [input[0], input[1], output[0], output[1]] { posix_spawn_file_actions_addclose(&actions, fd) }
        // Its errors come back on the status line; the caller's stderr is not kept open.
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup($0) } + [nil]
        defer { (cArgv + cEnvironment).forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, "/proc/self/exe", &actions, nil, cArgv, cEnvironment)
        close(input[0])
        close(output[1])
        guard status == 0 else {
            close(input[1]); close(output[0])
            throw CLIFailure("cannot start the agent: \(String(cString: strerror(status)))", .failure)
        }
        var line = secret.bytes + [0x0A]
        defer { wipe(&line) }
        _ = line.withUnsafeBytes { write(input[1], $0.baseAddress, $0.count) }
        close(input[1])
        var reply: [UInt8] = []
        var byte: UInt8 = 0
        while read(output[0], &byte, 1) == 1 && byte != 0x0A { reply.append(byte) }
        close(output[0])
        if !String(decoding: reply, as: UTF8.self).hasPrefix("ok ") {
            var ignored: Int32 = 0
            waitpid(pid, &ignored, 0)
        }
        return String(decoding: reply, as: UTF8.self)
    }

    /// Write `text` to standard output at once (the status line `spawn` waits for).
    static func report(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }

    /// Point standard input, output and error at /dev/null, so the caller's pipes close.
    static func detachStandardStreams() {
        let null = open("/dev/null", O_RDWR)
        guard null >= 0 else { return }
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] { dup2(null, fd) }
        if null > STDERR_FILENO { close(null) }
    }
}
