#if canImport(Glibc)
import Glibc
#endif
import RSAKit

/// `rsakit git-credential get|store|erase`, also run as `git-credential-rsakit` (the name
/// git gives a helper: `git config credential.helper rsakit`): git's credential helper
/// protocol (gitcredentials(7), git-credential(1)) over internet-password items.
///
/// Input: `key=value` lines up to a blank line or end of input; rsakit reads protocol, host
/// (with an optional `:port`), path, username, password and url, and ignores the others
/// (capability[], wwwauth[]...), as git asks helpers to.
struct GitCredentialCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "git-credential",
        overview: "A git credential helper over internet passwords (git config credential.helper rsakit).",
        usage:
            "rsakit git-credential get|store|erase   (git runs it as git-credential-rsakit, attributes on standard "
            + "input)",
        options: [],
        positionals: ["OPERATION"],
        subcommands: ["get", "store", "erase"],
        discussion: """
            get prints username= and password= for the most recently changed internet password whose
            protocol, host, port, path and username equal those git gives (those git leaves out match
            anything); nothing when there is none. store adds or updates the item (server = host,
            account = username, value = password); erase deletes the matching items. A protected store
            is unlocked from RSAKIT_STORE_PASSIN (or RSAKIT_PASSIN), else a prompt on the terminal.
            scripts/install.sh installs git-credential-rsakit as a link to rsakit.
            """)

    /// The attributes git sent.
    struct Request {
        var fields: [String: String] = [:]

        /// Parse git's `key=value` lines (at most 64 KiB in all).
        /// - Throws: `CLIFailure` (65) for a line without "=" or an invalid port.
        init(_ bytes: [UInt8]) throws {
            for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
                var text = String(decoding: line, as: UTF8.self)
                if text.hasSuffix("\r") { text.removeLast() }
                if text.isEmpty { break }
                guard let equals = text.firstIndex(of: "=") else {
                    throw CLIFailure("git credential input: a line without '=' (git sends key=value lines)", .dataError)
                }
                let key = String(text[..<equals]), value = String(text[text.index(after: equals)...])
                if key.hasSuffix("[]") { continue }
                fields[key] = value
            }
            if let url = fields["url"], let parsed = try? RSAInternetPasswordKey(url: url) {
                // git sends url= only when asked so; its parts fill what is missing.
                if fields["protocol"] == nil { fields["protocol"] = parsed.protocol }
                if fields["host"] == nil {
                    fields["host"] = parsed.port == 0 ? parsed.server : "\(parsed.server):\(parsed.port)"
                }
                if fields["path"] == nil && !parsed.path.isEmpty { fields["path"] = parsed.path }
                if fields["username"] == nil && !parsed.account.isEmpty { fields["username"] = parsed.account }
            }
        }

        /// host's name and port (0 when none).
        func server() throws -> (name: String, port: Int)? {
            guard let host = fields["host"], !host.isEmpty else { return nil }
            // [v6]:port or name:port.
            if let colon = host.lastIndex(of: ":"), !host[host.index(after: colon)...].contains("]") {
                let portText = host[host.index(after: colon)...]
                guard let port = Int(portText), (1...65535).contains(port) else {
                    throw CLIFailure(
                        "git credential input: host '\(terminalSafe(host))' has an invalid port", .dataError)
                }
                return (String(host[..<colon]), port)
            }
            return (host, 0)
        }

        /// The query of get and erase: the attributes given.
        func query() throws -> RSAInternetPasswordQuery? {
            guard let server = try server() else { return nil }
            return RSAInternetPasswordQuery(
                server: server.name, protocol: fields["protocol"], port: server.port,
                path: fields["path"], account: fields["username"])
        }
    }

    let arguments: ParsedArguments
    let operation: String

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        operation = try parseSubcommand(arguments, spec: Self.spec)
    }

    func run() throws {
        var input = [UInt8](repeating: 0, count: 64 * 1024)
        defer { wipe(&input) }
        var total = 0
        while total < input.count {
            let n = input.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress! + total, $0.count - total) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            total += n
        }
        var request = try Request(Array(input[0..<total]))
        defer { request.fields["password"] = nil }
        switch operation {
        case "get": try get(request)
        case "store": try store(request)
        default: try erase(request)
        }
    }

    /// Print username and password of the best match; print nothing when there is none or no store.
    private func get(_ request: Request) throws {
        guard let query = try request.query(), try storeExists(arguments) else { return }
        let store = try openStore(arguments)
        guard
            let item = try store.internetPasswords(matching: query).max(by: {
                $0.modificationDate < $1.modificationDate
            })
        else { return }
        let value = try withUnlockedStore(store, arguments, command: Self.spec.name) {
            try store.internetPasswordValue(item.key)
        }
        var bytes = value.bytes
        defer { wipe(&bytes) }
        // git's lines cannot carry a newline or NUL; such a value is not offered.
        guard !bytes.contains(0x0A), !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil else {
            throw CLIFailure(
                "the stored password for \(terminalSafe(item.key.description)) holds a newline, NUL or non-UTF-8 "
                    + "bytes; git cannot take it",
                .dataError)
        }
        var out = Array("username=\(item.key.account)\npassword=".utf8) + bytes + [0x0A]
        defer { wipe(&out) }
        var sink = RSAFileDescriptorSink(fileDescriptor: STDOUT_FILENO)
        try sink.write(out)
    }

    /// Add or update the item git approved (add, then update on `RSAError.duplicateItem`).
    private func store(_ request: Request) throws {
        guard let server = try request.server(), let username = request.fields["username"],
            let password = request.fields["password"]
        else { return }  // git sends all three; ignore less
        let key = try RSAInternetPasswordKey(
            server: server.name, protocol: request.fields["protocol"] ?? "", port: server.port,
            path: request.fields["path"] ?? "", account: username)
        let pending = try PendingStore(arguments, command: Self.spec.name, unlock: true)
        var bytes = Array(password.utf8)
        defer { wipe(&bytes) }
        let store = try pending.open()
        let value = RSASecretBytes(copying: bytes)
        do {
            try store.addInternetPassword(value, for: key, label: "git")
        } catch RSAError.duplicateItem {
            try store.updateInternetPassword(key, value: value, label: "git")
        }
    }

    /// Delete every item git rejected.
    private func erase(_ request: Request) throws {
        guard let query = try request.query(), try storeExists(arguments) else { return }
        let store = try openStore(arguments)
        for item in try store.internetPasswords(matching: query) { try store.deleteInternetPassword(item.key) }
    }
}
