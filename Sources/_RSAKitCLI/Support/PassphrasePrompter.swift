#if canImport(Glibc)
import Glibc
#endif
import RSAKit

// Who asks for a passphrase when no source names one (no --passin-style option, no
// RSAKIT_*PASSIN variable). In this order, the first that applies (docs/agent.md, the man page):
//
//   1. RSAKIT_PINENTRY=PATH      that pinentry program, terminal or not (naming it is the choice,
//                                as gpg-agent always uses its pinentry)
//   2. RSAKIT_ASKPASS=PATH       that askpass program, terminal or not
//   3. SSH_ASKPASS=PATH with SSH_ASKPASS_REQUIRE=force, or =prefer with DISPLAY or
//                                WAYLAND_DISPLAY set: that program, terminal or not (as ssh)
//   4. the terminal (/dev/tty)   echo off, as before
//   -- with no terminal only:
//   5. SSH_ASKPASS with DISPLAY or WAYLAND_DISPLAY set (and SSH_ASKPASS_REQUIRE not never),
//                                as ssh does: a desktop session often sets SSH_ASKPASS for
//                                everyone, so it must not take over a terminal's prompt
//   6. `pinentry` on PATH        Debian's alternative: pinentry-gnome3, -curses, -tty, ...;
//                                only with a display or a terminal to draw on (GPG_TTY, or a
//                                terminal on standard input, output or error), since without
//                                either it can only fail (pinentry-tty reports a cancel)
//   7. none: the usual error ("no terminal to ask on; give --store-passin ...", exit 64)
//
// PATH above may also be a bare name, looked up in PATH (posix_spawnp), as ssh runs SSH_ASKPASS.
// A found `pinentry` (6) that cannot show a dialog (no display, no terminal to draw on) falls
// back to the error of 7 with its reason; a named program's failure is reported as such.
// The programs get the environment without rsakit's passphrase variables, the prompt text
// (askpass: argv[1]), and never a secret; the answer is read from their standard output.
// After a wrong passphrase a program is asked once more (pinentry: SETERROR, then GETPIN
// again; askpass: the error before the prompt); the terminal asks once, as before.

/// One prompting conversation: asks for a passphrase, and again after a wrong one.
final class PassphrasePrompter {
    /// Where the passphrase is asked.
    enum Route: Equatable {
        case terminal
        /// An askpass program and the variable that named it.
        case askpass(path: String, variable: String)
        /// A pinentry program; `found` when it is `pinentry` on PATH rather than named.
        case pinentry(path: String, found: Bool)
    }

    let route: Route
    private var terminal: Int32 = -1
    private var pinentry: Pinentry?
    private let hint: String

    /// Whether a wrong answer is asked for again (programs: yes; the terminal: no).
    var retries: Bool { route != .terminal }

    /// The route the environment chooses (see the order above).
    ///
    /// - Throws: `CLIFailure` (64) when nothing can ask, naming `hint` (the option or variable
    ///   that would give the passphrase).
    init(hint: String) throws {
        self.hint = hint
        if let path = Self.variable("RSAKIT_PINENTRY") {
            route = .pinentry(path: path, found: false)
            return
        }
        if let path = Self.variable("RSAKIT_ASKPASS") {
            route = .askpass(path: path, variable: "RSAKIT_ASKPASS")
            return
        }
        let sshAskpass = Self.variable("SSH_ASKPASS")
        let require = Self.variable("SSH_ASKPASS_REQUIRE")?.lowercased()
        let display = Self.variable("DISPLAY") != nil || Self.variable("WAYLAND_DISPLAY") != nil
        if let sshAskpass, require == "force" || (require == "prefer" && display) {
            route = .askpass(path: sshAskpass, variable: "SSH_ASKPASS")
            return
        }
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        if fd >= 0 {
            terminal = fd
            route = .terminal
            return
        }
        if let sshAskpass, require != "never", display {
            route = .askpass(path: sshAskpass, variable: "SSH_ASKPASS")
            return
        }
        // A found pinentry needs somewhere to draw: a display, or a terminal it is told of.
        if display || Pinentry.terminalName() != nil, let path = Self.onPath("pinentry") {
            route = .pinentry(path: path, found: true)
            return
        }
        throw Self.noTerminal(hint: hint, reason: nil)
    }

    deinit { finish() }

    /// Ask for one passphrase: `prompt` on the terminal or as the program's prompt; `error`
    /// (a retry) shown with it.
    ///
    /// - Throws: `CLIFailure` (1) "... was cancelled" when the dialog was cancelled or the
    ///   askpass program failed; (64) when a found pinentry cannot show a dialog; (1) when a
    ///   named program cannot run; read failures.
    func ask(_ prompt: String, error: String? = nil) throws -> RSASecretBytes {
        switch route {
        case .terminal:
            return try Passphrase.readNoEcho(terminal, prompt: prompt)
        case let .askpass(path, variable):
            return try Self.askpass(path, variable: variable, prompt: (error.map { $0 + " " } ?? "") + prompt)
        case let .pinentry(path, found):
            do {
                if pinentry == nil { pinentry = try Pinentry(path: path, environment: Self.programEnvironment()) }
                // pinentry shows the description above a short prompt: the sentence without its colon.
                let description =
                    prompt.trimmingWhitespace().hasSuffix(":") ? String(prompt.trimmingWhitespace().dropLast()) : prompt
                let label = prompt.hasPrefix("PIN ") ? "PIN:" : "Passphrase:"
                return try pinentry!.ask(description: description, prompt: label, error: error)
            } catch is Pinentry.Cancelled {
                throw CLIFailure("the passphrase dialog was cancelled (pinentry \(terminalSafe(path)))", .failure)
            } catch let failure as Pinentry.Unavailable {
                pinentry?.end()
                pinentry = nil
                if found {
                    throw Self.noTerminal(hint: hint, reason: "pinentry \(terminalSafe(path)): \(failure.reason)")
                }
                throw CLIFailure(
                    "the pinentry program \(terminalSafe(path)) (RSAKIT_PINENTRY) failed: \(failure.reason)", .failure)
            }
        }
    }

    /// End the conversation: close the terminal, end the pinentry program.
    func finish() {
        if terminal >= 0 { close(terminal); terminal = -1 }
        pinentry?.end()
        pinentry = nil
    }

    /// The error for no way to ask.
    private static func noTerminal(hint: String, reason: String?) -> CLIFailure {
        CLIFailure(
            "a passphrase is needed and there is no terminal to ask on; give \(hint), or name a program in "
                + "RSAKIT_PINENTRY or RSAKIT_ASKPASS"
                + (reason.map { " (\($0))" } ?? ""), .usage)
    }

    /// Run the askpass program `path` with `prompt` as its one argument, as ssh does; its
    /// first line of standard output is the passphrase. A non-zero exit is a cancel (that is
    /// how ssh-askpass and its kin report one).
    private static func askpass(_ path: String, variable: String, prompt: String) throws -> RSASecretBytes {
        var output: [Int32] = [0, 0]
        guard closeOnExecPipe(&output) else {
            throw CLIFailure(
                "cannot run the askpass program: pipe: \(String(cString: strerror(errno)).lowercased())", .failure)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Standard input is not the program's to read (it may carry the command's own input).
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        let cArgv = [strdup(path), strdup(prompt), nil]
        let cEnvironment = programEnvironment().map { strdup($0) } + [nil]
        defer { (cArgv + cEnvironment).forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, path, &actions, nil, cArgv, cEnvironment)
        close(output[1])
        guard status == 0 else {
            close(output[0])
            throw CLIFailure(
                "cannot run the askpass program \(terminalSafe(path)) (\(variable)): "
                    + "\(String(cString: strerror(status)).lowercased())",
                .failure)
        }
        let line = Result { try Passphrase.firstLine(output[0], what: "the askpass program \(terminalSafe(path))") }
        close(output[0])
        var exit: Int32 = 0
        while waitpid(pid, &exit, 0) < 0 && errno == EINTR {}
        let secret = try line.get()
        // WIFEXITED && WEXITSTATUS == 0, spelt out (the macros do not reach Swift).
        guard exit & 0x7F == 0, (exit >> 8) & 0xFF == 0 else {
            throw CLIFailure(
                "the passphrase prompt was cancelled (askpass \(terminalSafe(path)) ended with status "
                    + "\(exit & 0x7F == 0 ? (exit >> 8) & 0xFF : 128 + exit & 0x7F))",
                .failure)
        }
        return secret
    }

    /// The environment for a prompting program: ours, without rsakit's passphrase variables
    /// nor any variable an `env:VAR` source in them names.
    static func programEnvironment() -> [String] {
        var secret: Set<String> = [
            "RSAKIT_STORE_PASSIN", "RSAKIT_PASSIN", "RSAKIT_NEW_PASSIN", "RSAKIT_PASSOUT", "RSAKIT_TOKEN_PIN"
        ]
        for name in secret {
            if let spec = variable(name), spec.hasPrefix("env:") { secret.insert(String(spec.dropFirst(4))) }
        }
        var out: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if !secret.contains(String(text.prefix { $0 != "=" })) { out.append(text) }
            pointer += 1
        }
        return out
    }

    /// A non-empty environment variable.
    private static func variable(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    /// The first executable `name` in PATH's folders.
    private static func onPath(_ name: String) -> String? {
        let path = variable("PATH") ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where folder.hasPrefix("/") {
            let candidate = folder + "/" + name
            if access(candidate, X_OK) == 0 { return String(candidate) }
        }
        return nil
    }
}
