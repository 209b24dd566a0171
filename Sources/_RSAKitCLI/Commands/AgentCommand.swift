#if canImport(Glibc)
import Glibc
#endif
import RSAKit

/// `rsakit agent start | status | lock | unlock | stop`: unlock a protected store once per
/// session (the ssh-agent pattern). `start` reads the passphrase, then starts the agent as a
/// fresh process (`rsakit agent serve`, argv and environment without any passphrase, the
/// passphrase on a pipe), waits for it to listen, and prints the shell lines that point
/// clients at it; an agent of the same store already at the socket is reused (and unlocked if
/// it was locked), as gpg-agent is, so `eval "$(rsakit agent start)"` fits a shell's start-up file.
/// With `--ssh` the agent also speaks the ssh-agent protocol on a second socket (SSH_AUTH_SOCK).
struct AgentCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "agent",
        overview: "Unlock a protected store once: start, query, lock or stop the rsakit agent.",
        usage:
            "rsakit agent start [--lifetime <DURATION>] [--idle <DURATION>] [--foreground] [--socket <PATH>] [--ssh "
            + "[--ssh-socket <PATH>] [--access-group <GROUP>]...] [--store-passin <SPEC>] [--store <DIR>] | "
            + "status | lock | unlock [--store-passin <SPEC>] | stop",
        options: [
            .value(
                "socket", "PATH",
                "The agent socket (default: $RSAKIT_AGENT_SOCK, else $XDG_RUNTIME_DIR/rsakit/agent.sock, else "
                    + "/tmp/rsakit-UID/agent.sock)."
            ),
            .value(
                "lifetime", "DURATION",
                "start: drop the key and end after DURATION (90s, 30m, 8h, 1d; default: no limit)."
            ).only("start", "serve"),
            .value(
                "idle", "DURATION", "start: drop the key and end after DURATION without a request (default: no limit)."
            ).only("start", "serve"),
            .flag("foreground", "start: stay attached and serve until stopped (default: run in the background).").only(
                "start"),
            .flag(
                "ssh", "start: also serve the store's RSA keys to ssh on an ssh-agent socket, and print SSH_AUTH_SOCK."
            ).only("start", "serve"),
            .value(
                "ssh-socket", "PATH",
                "start --ssh: the ssh-agent socket (default: beside the agent socket, agent-ssh.sock for agent.sock)."
            ).only("start", "serve"),
            .repeated(
                "access-group", "GROUP",
                "start --ssh: list and sign with only the keys of these access groups (repeatable; default: every "
                    + "group)."
            ).only("start", "serve"),
            .flag(
                "system",
                "serve: serve the system keychain (--store, else $RSAKIT_SYSTEM_STORE, else /var/lib/rsakit/system) "
                    + "to every local user by the rules of rsakit access-group, in the foreground, on --socket (else "
                    + "$RSAKIT_SYSTEM_SOCKET, else /run/rsakit/system.sock)."
            ).only("serve")
        ],
        positionals: ["SUBCOMMAND"],
        subcommands: ["start", "status", "lock", "unlock", "stop"],
        hiddenSubcommands: ["serve"],
        discussion: """
            start asks for the store's passphrase once (--store-passin, $RSAKIT_STORE_PASSIN, --passin,
            $RSAKIT_PASSIN, else a prompt: the pinentry program $RSAKIT_PINENTRY, the askpass program
            $RSAKIT_ASKPASS, $SSH_ASKPASS with SSH_ASKPASS_REQUIRE=force, the terminal; with no
            terminal, $SSH_ASKPASS when $DISPLAY is set, else pinentry on PATH; a program is asked
            once more after a wrong passphrase) and prints, as ssh-agent does:
                RSAKIT_AGENT_SOCK=/run/user/1000/rsakit/agent.sock; export RSAKIT_AGENT_SOCK;
            so `eval "$(rsakit agent start)"` sets it. Every command that needs a protected store's
            secrets asks the agent first and falls back to the passphrase when there is none, it is
            locked, or it serves another store. The store key never leaves the agent: it seals and
            opens item secrets for clients of the same user only. A changed passphrase or an
            unprotected store locks it; so do --lifetime and --idle, which also end it (status
            queries do not count as activity for --idle). unlock gives a locked agent the key again
            (the passphrase from the same sources as start). start with an agent of the same store
            already at the socket reuses it, unlocking it first if it is locked, and prints the same
            lines (exit 0). SIGINT and SIGTERM end the agent and remove its socket.
            start --ssh also listens on an ssh-agent socket (draft-miller-ssh-agent) and prints
                SSH_AUTH_SOCK=/run/user/1000/rsakit/agent-ssh.sock; export SSH_AUTH_SOCK;
            ssh-add -l lists the store's RSA private keys (identities' keys among them) with their
            tags as comments, and ssh signs with them (rsa-sha2-256, rsa-sha2-512; SHA-1 ssh-rsa
            signatures are refused). The private keys stay in the agent, opened for one signature
            each; a locked agent lists none. ssh-add cannot add, remove or lock keys there: rsakit
            import, delete and agent lock do. With --access-group (repeatable) ssh sees and uses
            only the keys of those groups; unlocking for rsakit's own commands is not filtered.
            status exits 0 when the agent serves this store unlocked, 1 otherwise.
            serve --system is the system keychain's agent, run in the foreground by the system keychain's
            own user (rsakit; the Debian package's rsakit-system-agent.service starts it), never as root.
            It makes the store 0700 if it is missing, listens on a socket every local user may
            connect to (0666), and decides each request by the caller's uid and groups (SO_PEERCRED)
            against the rules of rsakit access-group: a caller sees, reads and uses only the access
            groups a rule allows it; root may use every group and alone changes the rules. Commands
            reach it with --system (password add and find, list, sign and decrypt with --tag).
            """,
        passphrases: .only(["start", "serve", "unlock"]))

    let arguments: ParsedArguments
    let subcommand: String
    let socketPath: String
    /// The ssh-agent socket, when --ssh is given.
    let sshSocketPath: String?

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        subcommand = try parseSubcommand(arguments, spec: Self.spec)
        socketPath =
            arguments.value("socket")
            ?? (arguments.flag("system") ? RSASystemKeychain.defaultSocketPath() : RSAKeychainAgent.defaultSocketPath())
        for option in ["ssh-socket", "access-group"] where !arguments.values(option).isEmpty && !arguments.flag("ssh") {
            // The agent's own socket serves the whole store's key: groups filter ssh only.
            throw UsageError(message: "--\(option) needs --ssh", command: Self.spec.name)
        }
        sshSocketPath =
            arguments.flag("ssh") ? arguments.value("ssh-socket") ?? Self.sshSocketPath(beside: socketPath) : nil
        for option in ["lifetime", "idle"] { _ = try duration(option) }
    }

    func run() throws {
        switch subcommand {
        case "start": try start()
        case "serve" where arguments.flag("system"): try serveSystem()
        case "serve": try serve()
        case "unlock":
            let store = try protectedStore()
            guard try unlockRunningAgent(store) else {
                throw CLIFailure("no agent listens at \(terminalSafe(socketPath))", .failure)
            }
            try printOutput("agent unlocked\n")
        case "status":
            let store = try storeLocation(arguments)
            guard let status = RSAKeychainAgent.status(at: socketPath, storePath: store) else {
                throw CLIFailure("no agent listens at \(terminalSafe(socketPath))", .failure)
            }
            guard status.unlocked else {
                throw CLIFailure("the agent at \(terminalSafe(socketPath)): \(terminalSafe(status.message))", .failure)
            }
            try printOutput(
                "the agent at \(terminalSafe(socketPath)) serves the store at \(terminalSafe(store)), unlocked\n")
        default:
            guard RSAKeychainAgent.send(subcommand == "lock" ? .lock : .stop, to: socketPath) else {
                throw CLIFailure("no agent listens at \(terminalSafe(socketPath))", .failure)
            }
            if subcommand == "stop" {
                // Until the agent has removed its socket (it checks every 250 ms), at most 5 s.
                var info = stat()
                for _ in 0..<100 where stat(socketPath, &info) == 0 { usleep(50_000) }
            }
            try printOutput(subcommand == "lock" ? "agent locked\n" : "agent stopped\n")
        }
    }

    /// Seconds of `--option` ("90", "90s", "30m", "8h", "1d"), nil when absent.
    private func duration(_ option: String) throws -> Double? {
        guard let text = arguments.value(option) else { return nil }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var number = Substring(text), scale = 1.0
        if let last = text.last, let unit = units[last] { number = text.dropLast(); scale = unit }
        guard let value = Double(number), value > 0 else {
            throw UsageError(
                message: "--\(option) expects a duration such as 90s, 30m, 8h or 1d, got '\(terminalSafe(text))'",
                command: Self.spec.name)
        }
        return value * scale
    }

    /// The store to serve: it must exist and be protected.
    private func protectedStore() throws -> RSAKeyStore {
        let store = try openStore(arguments)
        guard try store.isProtected else {
            throw CLIFailure(
                "the key store at \(terminalSafe(store.path)) is not protected: it needs no agent (rsakit store "
                    + "protect)",
                .usage)
        }
        return store
    }

    /// `agent start`: in the foreground, unlock and serve here; else hand the passphrase to a
    /// clean `agent serve` process on a pipe and wait until it listens.
    private func start() throws {
        let store = try protectedStore()
        if let status = RSAKeychainAgent.status(at: socketPath, storePath: store.path), status.serves {
            if !status.unlocked { _ = try unlockRunningAgent(store) }
            var lines = shellLines()
            if let sshSocketPath, !RSAKeychainAgent.isListening(at: sshSocketPath) {
                // Only the agent's own socket is known to be live: point ssh at nothing rather than at a dead path.
                lines = shellLines(ssh: false)
                printError(
                    "rsakit: warning: the running agent does not serve ssh at \(terminalSafe(sshSocketPath)) (rsakit "
                        + "agent stop, then start --ssh)"
                )
            }
            return try printOutput(lines + "echo Agent already running;\n")
        }
        if arguments.flag("foreground") {
            try Passphrase.withStorePassphrase(arguments, command: Self.spec.name, path: store.path) {
                try store.unlock(passphrase: $0)
            }
            let agent = try RSAKeychainAgent(
                store: store, socketPath: socketPath, lifetime: try duration("lifetime"), idle: try duration("idle"))
            try namingRunningAgent(store) {
                try agent.serve(sshSocketPath: sshSocketPath) { try? printOutput(shellLines()) }
            }
            return
        }
        var argv = [CommandLine.arguments[0], "agent", "serve", "--store", store.path, "--socket", socketPath]
        for option in ["lifetime", "idle"] { if let value = arguments.value(option) { argv += ["--\(option)", value] } }
        if arguments.flag("allow-insecure-store") { argv.append("--allow-insecure-store") }
        if let sshSocketPath { argv += ["--ssh", "--ssh-socket", sshSocketPath] }
        for group in arguments.values("access-group") { argv += ["--access-group", group] }
        // The agent process checks the passphrase; a wrong one ends it, and a prompting
        // program is asked once more for a second agent process.
        let reply = try Passphrase.withStorePassphrase(arguments, command: Self.spec.name, path: store.path) {
            passphrase in
            let reply = try AgentProcess.spawn(
                argv, environment: AgentProcess.environmentWithoutSecrets(arguments), secret: passphrase)
            if reply.hasPrefix("error: wrong passphrase") { throw RSAError.wrongPassphrase }
            return reply
        }
        guard reply.hasPrefix("ok ") else {
            throw CLIFailure(
                reply.hasPrefix("error: ") ? String(reply.dropFirst(7)) : "the agent did not start", .failure)
        }
        // Only digits reach the shell that evals this, whatever the reply held.
        let pid = Int32(String(reply.dropFirst(3)).trimmingWhitespace()).map { " \($0)" } ?? ""
        try printOutput(shellLines() + "echo Agent pid\(pid);\n")
    }

    /// Give the agent at the socket the key of `store` with its passphrase.
    /// - Returns: false when no agent listens there.
    /// - Throws: `CLIFailure` (65) for a wrong passphrase; (1) when the agent serves another
    ///   store or cannot take the key.
    private func unlockRunningAgent(_ store: RSAKeyStore) throws -> Bool {
        return try Passphrase.withStorePassphrase(arguments, command: Self.spec.name, path: store.path) {
            try RSAKeychainAgent.unlock(at: socketPath, storePath: store.path, passphrase: $0)
        }
    }

    /// `agent serve` (started by `agent start`): the passphrase on standard input, one line
    /// "ok PID" or "error: MESSAGE" on standard output once listening, then detached.
    private func serve() throws {
        _ = setsid()
        do {
            let store = try protectedStore()
            let passphrase = try Passphrase.read(source: .standardInput)
            try namingStore(store.path) { try store.unlock(passphrase: passphrase) }
            let agent = try RSAKeychainAgent(
                store: store, socketPath: socketPath, lifetime: try duration("lifetime"), idle: try duration("idle"))
            RSAKitProcessHardening.lockMemory()
            try namingRunningAgent(store) {
                try agent.serve(sshSocketPath: sshSocketPath) {
                    AgentProcess.report("ok \(getpid())\n")
                    AgentProcess.detachStandardStreams()
                }
            }
        } catch {
            AgentProcess.report("error: \(error)\n")
            throw error
        }
    }

    /// `agent serve --system`: the system keychain's agent, in the foreground, as the store's
    /// own user; "listening: SOCKET" on standard output once it accepts.
    private func serveSystem() throws {
        guard geteuid() != 0 else {
            throw CLIFailure(
                "the system keychain's agent runs as its own user (rsakit), not as root: its store must be readable "
                    + "by no one else",
                .usage)
        }
        let path = arguments.value("store") ?? RSASystemKeychain.defaultStorePath()
        _ = try RSAKeyStore(path: path)
        let agent = try RSASystemKeychainAgent(storePath: path, socketPath: socketPath)
        RSAKitProcessHardening.lockMemory()
        let stop: @convention(c) (Int32) -> Void = { _ in systemAgentStopRequested = 1 }
        signal(SIGTERM, stop)
        signal(SIGINT, stop)
        try agent.serve(
            ready: { try? printOutput("listening: \(terminalSafe(socketPath))\n") },
            shouldStop: { systemAgentStopRequested != 0 })
    }

    /// `body` (an agent's `serve`), its failure on a socket where another agent answers
    /// given the command that ends that agent (the library's message names none).
    private func namingRunningAgent(_ store: RSAKeyStore, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as RSAError {
            guard case let .storeIOError(path, _) = error, path == socketPath || path == sshSocketPath,
                RSAKeychainAgent.status(at: socketPath, storePath: store.path) != nil
            else { throw error }
            throw CLIFailure(error.description + " (rsakit agent stop ends it)", CLIFailure.status(for: error))
        }
    }

    /// The default ssh-agent socket for the agent socket `path`: in the same folder, named
    /// after it (agent.sock: agent-ssh.sock), so two agents in one folder do not share one.
    static func sshSocketPath(beside path: String) -> String {
        path.hasSuffix(".sock") ? String(path.dropLast(5)) + "-ssh.sock" : path + "-ssh"
    }

    /// The lines `eval "$(rsakit agent start)"` runs. The socket path comes from --socket,
    /// RSAKIT_AGENT_SOCK or XDG_RUNTIME_DIR, which may hold anything: it is single-quoted
    /// unless it is made only of characters no shell treats specially.
    private func shellLines(ssh: Bool = true) -> String {
        var lines = "RSAKIT_AGENT_SOCK=\(shellQuoted(socketPath)); export RSAKIT_AGENT_SOCK;\n"
        if ssh, let sshSocketPath { lines += "SSH_AUTH_SOCK=\(shellQuoted(sshSocketPath)); export SSH_AUTH_SOCK;\n" }
        return lines
    }
}

/// Set by SIGTERM or SIGINT in `agent serve --system`: the agent then stops, removing its socket.
nonisolated(unsafe) private var systemAgentStopRequested: sig_atomic_t = 0
