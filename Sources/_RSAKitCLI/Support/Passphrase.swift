#if canImport(Glibc)
import Glibc
#endif
import RSAKit

// Passphrases, never from the command line proper (argv is visible in `ps`). Two roles, as
// openssl splits -passin from -passout:
//
//   the file being read   --passin SPEC, else RSAKIT_PASSIN, else a prompt naming the file
//   (PKCS#12, encrypted key file)
//   the key store         --store-passin SPEC, else RSAKIT_STORE_PASSIN, else --passin /
//                         RSAKIT_PASSIN (one passphrase for both, as scripts written before
//                         the split expect; a wrong one is reported as the store's), else a
//                         prompt "Passphrase for the key store at PATH: "
//   an output file        --passout SPEC, else RSAKIT_PASSOUT, else a prompt asked twice
//
// A prompt is asked where PassphrasePrompter.swift says: a named pinentry or askpass program
// (RSAKIT_PINENTRY, RSAKIT_ASKPASS, SSH_ASKPASS as ssh uses it), the terminal, else a
// `pinentry` found on PATH when there is no terminal.
//
// SPEC has OpenSSL's syntax (openssl-passphrase-options(1)):
//     pass:TEXT           the text itself (for tests only: it is visible in `ps`; the guides warn)
//     env:VAR             the value of the environment variable VAR
//     file:PATH           the first line of the file PATH
//     fd:N                the first line read from file descriptor N
//     stdin               the first line of standard input
// With no source and no terminal, a clear error names the option to give. A malformed SPEC
// is a usage error that never shows the SPEC (it may be the passphrase itself).
//
// "First line" means up to the first "\n" (a "\r" before it is dropped too), as OpenSSL
// reads them. Bytes are read one at a time from descriptors, so whatever follows the line
// stays unread for the command (for example a password value after the passphrase on stdin).
// Every buffer holding passphrase bytes is zeroed; the result is an `RSASecretBytes`.

/// Where a passphrase comes from, parsed from a `--passin`-style SPEC.
enum PassphraseSource: Equatable {
    case literal(String)
    case environment(String)
    case file(String)
    case fileDescriptor(Int32)
    case standardInput

    /// Parse SPEC. - Throws: `UsageError` for an unknown form.
    init(spec: String, option: String, command: String?) throws {
        if spec == "stdin" {
            self = .standardInput
        } else if spec.hasPrefix("pass:") {
            self = .literal(String(spec.dropFirst(5)))
        } else if spec.hasPrefix("env:") {
            let name = String(spec.dropFirst(4))
            guard !name.isEmpty else {
                throw UsageError(message: "\(option) env: needs a variable name (env:VAR)", command: command)
            }
            self = .environment(name)
        } else if spec.hasPrefix("file:") {
            let path = String(spec.dropFirst(5))
            guard !path.isEmpty else {
                throw UsageError(message: "\(option) file: needs a path (file:PATH)", command: command)
            }
            self = .file(path)
        } else if spec.hasPrefix("fd:") {
            guard let fd = Int32(spec.dropFirst(3)), fd >= 0 else {
                throw UsageError(message: "\(option) fd: needs a file descriptor number (fd:N)", command: command)
            }
            self = .fileDescriptor(fd)
        } else {
            // The value is not shown, not even in part: a mistyped SPEC is often the
            // passphrase itself ("--passin correct-horse").
            throw UsageError(
                message:
                    "\(option) must be pass:TEXT, env:VAR, file:PATH, fd:N or stdin (the value given is none of "
                    + "these; it is not shown, since it may be a passphrase)",
                command: command)
        }
    }
}

/// Reading passphrases for commands (`--passin`, `RSAKIT_PASSIN`, a /dev/tty prompt).
enum Passphrase {
    /// The longest passphrase accepted, in bytes.
    static let maximumByteCount = 64 * 1024

    /// The passphrase named by option `option` (default `passin`) of `arguments`, else by the
    /// environment variable `variable` (default `RSAKIT_PASSIN`), else read from /dev/tty
    /// after printing `prompt` (asked twice when `confirm`, for a new passphrase).
    ///
    /// - Throws: `UsageError` for a malformed SPEC; `CLIFailure` when the source cannot be
    ///   read or no source exists (no option, no variable, no terminal).
    static func read(
        _ arguments: ParsedArguments, command: String, option: String = "passin",
        variable: String = "RSAKIT_PASSIN", prompt: String, confirm: Bool = false
    ) throws -> RSASecretBytes {
        if let source = try configuredSource(arguments, command: command, option: option, variable: variable) {
            return try read(source: source)
        }
        return try prompted(prompt, confirm: confirm, hint: "--\(option) SPEC or \(variable)")
    }

    /// The passphrase of the key store at `path`: `--store-passin`, `RSAKIT_STORE_PASSIN`, then
    /// `--passin` / `RSAKIT_PASSIN`, then a prompt on the
    /// terminal ("New passphrase ..." asked twice when `new`).
    ///
    /// - Throws: `UsageError` for a malformed SPEC; `CLIFailure` (64) when no source exists,
    ///   naming `--store-passin`; (64) for an empty new passphrase; read failures.
    static func readStore(_ arguments: ParsedArguments, command: String, path: String, new: Bool = false) throws
        -> RSASecretBytes
    {
        let passphrase: RSASecretBytes
        if let source = try configuredSource(
            arguments, command: command, option: "store-passin", variable: "RSAKIT_STORE_PASSIN")
        {
            passphrase = try read(source: source)
        } else if let source = try configuredSource(
            arguments, command: command, option: "passin", variable: "RSAKIT_PASSIN")
        {
            passphrase = try read(source: source)
        } else {
            let prompt =
                (new ? "New passphrase for the key store at " : "Passphrase for the key store at ") + "\(path): "
            passphrase = try prompted(prompt, confirm: new, hint: "--store-passin SPEC or RSAKIT_STORE_PASSIN")
        }
        if new { try requireNonEmpty(passphrase, newPassphraseOfStoreAt: path) }
        return passphrase
    }

    /// - Throws: `CLIFailure` (64) when `passphrase`, the new one of the store at `path`, is empty.
    static func requireNonEmpty(_ passphrase: RSASecretBytes, newPassphraseOfStoreAt path: String) throws {
        guard passphrase.isEmpty else { return }
        throw CLIFailure(
            "the new passphrase for the key store at \(terminalSafe(path)) is empty; give a non-empty one", .usage)
    }

    /// The source named by `--option` else by the environment variable `variable`, parsed;
    /// nil when neither is set (an empty variable counts as unset).
    /// Whether `--passin` or `RSAKIT_PASSIN` names a source (which may still fail to give
    /// a passphrase: an unset variable, a missing file).
    static func hasSource(_ arguments: ParsedArguments) -> Bool {
        (try? configuredSource(arguments, command: "", option: "passin", variable: "RSAKIT_PASSIN")) != nil
    }

    /// Whether `--store-passin` or `RSAKIT_STORE_PASSIN` names the store's passphrase (then a
    /// store sealed to the TPM is opened with it, not the TPM).
    static func storeSourceGiven(_ arguments: ParsedArguments, command: String) -> Bool {
        (try? configuredSource(arguments, command: command, option: "store-passin", variable: "RSAKIT_STORE_PASSIN"))
            != nil
    }

    private static func configuredSource(
        _ arguments: ParsedArguments, command: String, option: String, variable: String
    ) throws -> PassphraseSource? {
        if let spec = arguments.value(option) {
            return try PassphraseSource(spec: spec, option: "--\(option)", command: command)
        }
        if let spec = getenv(variable).map({ String(cString: $0) }), !spec.isEmpty {
            return try PassphraseSource(spec: spec, option: variable, command: command)
        }
        return nil
    }

    /// The passphrase from one parsed source.
    static func read(source: PassphraseSource) throws -> RSASecretBytes {
        switch source {
        case let .literal(text):
            return RSASecretBytes(utf8: text)
        case let .environment(name):
            guard let value = getenv(name) else {
                throw CLIFailure("passphrase variable \(name) is not set", .usage)
            }
            let length = strlen(value)
            let secret = RSASecretBytes(copying: UnsafeRawBufferPointer(start: value, count: length))
            return secret
        case let .file(path):
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                throw CLIFailure(
                    "cannot read passphrase file '\(path)': \(String(cString: strerror(code)).lowercased())",
                    code == ENOENT ? .notFound : .failure)
            }
            defer { close(fd) }
            return try firstLine(fd, what: "passphrase file '\(path)'")
        case let .fileDescriptor(fd):
            return try firstLine(fd, what: "passphrase descriptor \(fd)")
        case .standardInput:
            return try firstLine(STDIN_FILENO, what: "standard input")
        }
    }

    /// Read bytes one at a time from `fd` up to the first "\n" (not included; a "\r" before
    /// it is dropped) or the end of input.
    static func firstLine(_ fd: Int32, what: String) throws -> RSASecretBytes {
        var line = [UInt8]()
        line.reserveCapacity(256)
        defer { wipe(&line) }
        var byte: UInt8 = 0
        while true {
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIFailure(
                    "cannot read the passphrase from \(what): \(String(cString: strerror(errno)).lowercased())",
                    .failure)
            }
            if n == 0 || byte == 0x0A { break }
            if line.count == line.capacity {
                // Grow by hand so that no unwiped copy of the old storage is left behind.
                var bigger = [UInt8]()
                bigger.reserveCapacity(line.capacity * 2)
                bigger.append(contentsOf: line)
                wipe(&line)
                line = bigger
            }
            line.append(byte)
            guard line.count <= maximumByteCount else {
                throw CLIFailure("the passphrase from \(what) is longer than \(maximumByteCount) bytes", .dataError)
            }
        }
        byte = 0
        if line.last == 0x0D { line[line.count - 1] = 0; line.removeLast() }
        return RSASecretBytes(copying: line)
    }

    /// Ask for a passphrase where ``PassphrasePrompter`` says (a named pinentry or askpass
    /// program, the terminal with echo off, else a found one); twice when `confirm`.
    ///
    /// - Parameter entries: what is typed, for the mismatch message ("passphrases", "values").
    /// - Throws: `CLIFailure` (exit 64) when nothing can ask, naming `hint`; (exit 65) when the
    ///   two entries differ; (exit 1) when a program's dialog was cancelled or it failed.
    static func prompted(_ prompt: String, confirm: Bool, hint: String, entries: String = "passphrases") throws
        -> RSASecretBytes
    {
        let prompter = try PassphrasePrompter(hint: hint)
        defer { prompter.finish() }
        let first = try prompter.ask(prompt)
        guard confirm else { return first }
        let second = try prompter.ask("Verifying - " + prompt)
        guard first.constantTimeEquals(second) else {
            throw CLIFailure("the \(entries) entered do not match", .dataError)
        }
        return first
    }

    /// Run `use` with the passphrase of the key store at `path` (the sources of
    /// ``readStore(_:command:path:new:)``). When it was asked of a program (pinentry, askpass)
    /// and `use` throws `RSAError.wrongPassphrase`, the program is asked once more, with the
    /// error shown; a second wrong one, or a wrong one from any other source, is the usual
    /// "wrong passphrase for the key store" (exit 65).
    ///
    /// - Throws: what `use` throws; `CLIFailure` as ``readStore(_:command:path:new:)`` and
    ///   ``prompted(_:confirm:hint:entries:)`` do.
    static func withStorePassphrase<T>(
        _ arguments: ParsedArguments, command: String, path: String,
        _ use: (RSASecretBytes) throws -> T
    ) throws -> T {
        let storeSource = try configuredSource(
            arguments, command: command, option: "store-passin", variable: "RSAKIT_STORE_PASSIN")
        let sharedSource = try configuredSource(
            arguments, command: command, option: "passin", variable: "RSAKIT_PASSIN")
        if storeSource != nil || sharedSource != nil {
            let passphrase = try readStore(arguments, command: command, path: path)
            return try namingStore(path) { try use(passphrase) }
        }
        let prompter = try PassphrasePrompter(hint: "--store-passin SPEC or RSAKIT_STORE_PASSIN")
        defer { prompter.finish() }
        let prompt = "Passphrase for the key store at \(path): "
        if prompter.retries {
            do {
                let passphrase = try prompter.ask(prompt)
                return try use(passphrase)
            } catch RSAError.wrongPassphrase {
                // One more try, as ssh and gpg-agent give: the dialog says why it asks again.
                let passphrase = try prompter.ask(prompt, error: "Wrong passphrase; try again.")
                return try namingStore(path) { try use(passphrase) }
            }
        }
        let passphrase = try prompter.ask(prompt)
        return try namingStore(path) { try use(passphrase) }
    }

    /// Turn echo off on the terminal `fd`, write `prompt`, read one line, restore the
    /// terminal (also on SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP: the handler restores it
    /// and re-raises the signal). Echo goes off, discarding what was typed ahead (TCSAFLUSH),
    /// before the prompt shows: what is typed once the prompt is there is never lost.
    static func readNoEcho(_ fd: Int32, prompt: String) throws -> RSASecretBytes {
        var saved = termios()
        let isTerminal = tcgetattr(fd, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO | ECHONL)
            quiet.c_lflag |= tcflag_t(ICANON)
            TerminalRestore.arm(fd: fd, saved: saved)
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        writeAll(fd, prompt)
        defer {
            if isTerminal {
                tcsetattr(fd, TCSAFLUSH, &saved)
                TerminalRestore.disarm()
            }
            writeAll(fd, "\n")
        }
        return try firstLine(fd, what: "the terminal")
    }

    private static func writeAll(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// Restores the terminal if a signal ends the process while echo is off.
private enum TerminalRestore {
    nonisolated(unsafe) static var fd: Int32 = -1
    nonisolated(unsafe) static var saved = termios()
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP]

    /// The handlers in place before `arm` (the one that removes temporary files, say), put
    /// back by `disarm` and run after the terminal is restored.
    nonisolated(unsafe) static var previous: [Int32: sigaction] = [:]

    static func arm(fd: Int32, saved: termios) {
        Self.saved = saved
        Self.fd = fd
        for signal in signals {
            var old = sigaction()
            sigaction(signal, nil, &old)
            previous[signal] = old
            Glibc.signal(signal) { number in
                if TerminalRestore.fd >= 0 { tcsetattr(TerminalRestore.fd, TCSANOW, &TerminalRestore.saved) }
                // The handler before this one (dictionary reads allocate nothing here: it was
                // filled before arming), else the default action.
                if var old = TerminalRestore.previous[number] {
                    sigaction(number, &old, nil)
                } else {
                    Glibc.signal(number, SIG_DFL)
                }
                raise(number)
            }
        }
    }

    static func disarm() {
        for signal in signals {
            if var old = previous[signal] { sigaction(signal, &old, nil) } else { Glibc.signal(signal, SIG_DFL) }
        }
        fd = -1
    }
}

/// Zero an array's bytes (the CLI's copy of the library's best-effort wipe).
func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
        if let base = buffer.baseAddress { explicit_bzero(base, buffer.count) }
    }
}
