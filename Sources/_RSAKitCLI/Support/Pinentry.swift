#if canImport(Glibc)
import Glibc
#endif
import RSAKit

// A pinentry program (GnuPG's passphrase dialogs: pinentry-tty, -curses, -gnome3, ...) driven
// over its standard input and output with the Assuan protocol, the small part of it that
// pinentry needs (the Assuan developer's manual, "Client requests" and "Server responses"):
//
//   server -> client   OK [text]            the greeting, and the end of every answer
//                      ERR code [text]      failure; code = source << 24 | gpg-error code
//                      D data               data: %, CR and LF (and any byte) as %XX
//                      S status / # text    status and comment lines, ignored here
//   client -> server   OPTION ttyname=PATH, OPTION ttytype=TERM   where a terminal dialog draws
//                      SETTITLE / SETDESC / SETPROMPT / SETERROR text   (%, CR, LF as %XX)
//                      GETPIN -> D passphrase, OK;  or ERR ... Operation cancelled
//                      BYE
//
// Lines are at most 1,000 bytes in Assuan; a passphrase longer than a line comes in several D
// lines, concatenated. Every buffer that holds passphrase bytes (the raw line, the decoded
// passphrase) is zeroed once read.

/// One conversation with a pinentry program: spawned once, asked one or more times, ended
/// with BYE. The passphrase never crosses argv or the environment: it is read from the
/// program's standard output into a zeroed buffer.
final class Pinentry {
    /// The program, as given (`RSAKIT_PINENTRY`) or found on PATH (`pinentry`).
    let path: String
    private let pid: pid_t
    private let toProgram: Int32
    private let fromProgram: Int32
    private var ended = false
    private var savedPipeAction = sigaction()

    /// The gpg-error codes of a cancelled dialog: GPG_ERR_CANCELED (99) and
    /// GPG_ERR_FULLY_CANCELED (198), in the low 16 bits of an ERR code.
    private static let cancelCodes: Set<Int> = [99, 198]

    /// A failure of the dialog that is not a cancel (no terminal to draw on, no display).
    struct Unavailable: Error {
        let reason: String
    }

    /// A cancelled dialog.
    struct Cancelled: Error {}

    /// Start `path` and read its greeting; set the terminal it draws on (`GPG_TTY`, else the
    /// terminal of standard input, output or error) and the terminal type (`TERM`).
    ///
    /// - Throws: `Unavailable` when it cannot be started or does not greet.
    init(path: String, environment: [String]) throws {
        self.path = path
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0]
        guard closeOnExecPipe(&input) else { throw Unavailable(reason: "pipe: \(errnoText())") }
        guard closeOnExecPipe(&output) else {
            close(input[0]); close(input[1])
            throw Unavailable(reason: "pipe: \(errnoText())")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        // Its diagnostics are not ours to show; what it reports comes back as ERR lines.
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // SIGPIPE is ignored here while the conversation lasts; the program gets its default.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        let cArgv = [strdup(path)] + [nil]
        let cEnvironment = environment.map { strdup($0) } + [nil]
        defer { (cArgv + cEnvironment).forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawnp(&child, path, &actions, &attributes, cArgv, cEnvironment)
        close(input[0])
        close(output[1])
        guard status == 0 else {
            close(input[1]); close(output[0])
            throw Unavailable(reason: "cannot run it: \(String(cString: strerror(status)).lowercased())")
        }
        pid = child
        toProgram = input[1]
        fromProgram = output[0]
        var ignore = sigaction()
        ignore.__sigaction_handler.sa_handler = SIG_IGN
        sigaction(SIGPIPE, &ignore, &savedPipeAction)
        do {
            _ = try answer()  // the greeting
            let tty = Self.terminalName()
            if let tty { _ = try? command("OPTION ttyname=" + tty) }
            if let term = getenv("TERM").map({ String(cString: $0) }), !term.isEmpty {
                _ = try? command("OPTION ttytype=" + term)
            }
            _ = try? command("SETTITLE rsakit")
        } catch {
            end()
            throw error
        }
    }

    deinit { end() }

    /// Ask once: SETDESC `description`, SETPROMPT `prompt`, SETERROR `error` when given (the
    /// retry after a wrong passphrase), GETPIN.
    ///
    /// - Returns: the passphrase (possibly empty), in a buffer the caller owns.
    /// - Throws: `Cancelled` for a cancelled dialog; `Unavailable` for any other failure.
    func ask(description: String, prompt: String, error: String?) throws -> RSASecretBytes {
        _ = try command("SETDESC " + Self.escaped(description))
        _ = try command("SETPROMPT " + Self.escaped(prompt))
        if let error { _ = try command("SETERROR " + Self.escaped(error)) }
        var secret = try command("GETPIN")
        defer { wipe(&secret) }
        return RSASecretBytes(copying: secret)
    }

    /// Send BYE, close both pipes, reap the program, restore SIGPIPE's action.
    func end() {
        guard !ended else { return }
        ended = true
        writeLine("BYE")
        close(toProgram)
        close(fromProgram)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        sigaction(SIGPIPE, &savedPipeAction, nil)
    }

    /// Send one command line and read its answer.
    /// - Returns: the bytes of its D lines, decoded and concatenated (zero them after use).
    private func command(_ line: String) throws -> [UInt8] {
        guard writeLine(line) else { throw Unavailable(reason: "it ended: \(errnoText())") }
        return try answer()
    }

    /// Read lines up to OK or ERR.
    private func answer() throws -> [UInt8] {
        var data: [UInt8] = []
        while true {
            var line = try readLine()
            defer { wipe(&line) }
            if line.starts(with: Array("OK".utf8)) && (line.count == 2 || line[2] == 0x20) { return data }
            if line.starts(with: Array("D ".utf8)) {
                // Room for the longest answer at once, so that appending never moves the
                // bytes and leaves an unzeroed copy behind (a line adds at most 4,096).
                if data.isEmpty { data.reserveCapacity(Passphrase.maximumByteCount + 4096) }
                guard Self.decode(line[2...], into: &data) else {
                    wipe(&data)
                    throw Unavailable(reason: "it sent a malformed data line")
                }
                guard data.count <= Passphrase.maximumByteCount else {
                    wipe(&data)
                    throw Unavailable(reason: "its answer is longer than \(Passphrase.maximumByteCount) bytes")
                }
                continue
            }
            if line.starts(with: Array("ERR ".utf8)) {
                wipe(&data)
                let text = String(decoding: line.dropFirst(4), as: UTF8.self)
                let code = Int(text.prefix { $0.isNumber }) ?? 0
                if Self.cancelCodes.contains(code & 0xFFFF) { throw Cancelled() }
                let reason = String(text.drop { $0.isNumber }).trimmingWhitespace()
                throw Unavailable(reason: terminalSafe(reason.isEmpty ? "error \(code)" : reason))
            }
            if line.starts(with: Array("INQUIRE".utf8)) {
                // Nothing here is asked for with an inquiry (no quality bar, no repeat): decline.
                writeLine("CAN")
                continue
            }
            // "S ..." status and "# ..." comment lines carry nothing for us.
        }
    }

    /// One line from the program, without its "\n"; at most 4,096 bytes (Assuan's lines are
    /// at most 1,000).
    private func readLine() throws -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(4096)
        var byte: UInt8 = 0
        while true {
            let n = read(fromProgram, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { wipe(&line); throw Unavailable(reason: "cannot read from it: \(errnoText())") }
            if n == 0 { wipe(&line); throw Unavailable(reason: "it ended without an answer") }
            if byte == 0x0A { byte = 0; return line }
            guard line.count < 4096 else { wipe(&line); throw Unavailable(reason: "it sent a line over 4096 bytes") }
            line.append(byte)
        }
    }

    @discardableResult
    private func writeLine(_ text: String) -> Bool {
        let bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(toProgram, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// `text` for a command's argument: "%", CR and LF as %25, %0D, %0A (Assuan's escaping).
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "%": out += "%25"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Append the bytes of a D line's data, %XX decoded, to `out`.
    /// - Returns: false for a "%" not followed by two hex digits.
    static func decode(_ data: ArraySlice<UInt8>, into out: inout [UInt8]) -> Bool {
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x41...0x46: return c - 0x41 + 10
            case 0x61...0x66: return c - 0x61 + 10
            default: return nil
            }
        }
        var index = data.startIndex
        while index < data.endIndex {
            let c = data[index]
            if c == 0x25 {
                guard data.endIndex - index >= 3, let high = hex(data[index + 1]), let low = hex(data[index + 2]) else {
                    return false
                }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(c)
                index += 1
            }
        }
        return true
    }

    /// The terminal a text-mode pinentry should draw on: `GPG_TTY` (the variable gpg-agent's
    /// users already set), else the terminal of standard input, output or error; nil for none.
    static func terminalName() -> String? {
        if let tty = getenv("GPG_TTY").map({ String(cString: $0) }), !tty.isEmpty { return tty }
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where isatty(fd) == 1 {
            if let name = ttyname(fd) { return String(cString: name) }
        }
        return nil
    }

}

private func errnoText() -> String { String(cString: strerror(errno)).lowercased() }

/// pipe(2) with both ends close-on-exec, so that no other child inherits them (a spawned
/// program gets its end through a dup2, which clears the flag on the copy).
/// - Returns: false when the pipe cannot be made (errno says why).
func closeOnExecPipe(_ ends: inout [Int32]) -> Bool {
    guard pipe(&ends) == 0 else { return false }
    for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return true
}
