#if canImport(Glibc)
import Glibc
#endif
import RSAKit

/// `rsakit internet-password add | find | delete | list`: internet passwords, after macOS
/// `security add-internet-password`, `find-internet-password -w`, `delete-internet-password`.
struct InternetPasswordCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "internet-password",
        overview: "Add, find, delete or list internet passwords (server, protocol, port, path, account).",
        usage:
            "rsakit internet-password add|find|delete|list [--url <URL>] [--server <S>] [--protocol <P>] [--port "
            + "<N>] [--path <P>] [--account <A>] [--authentication-type <T>] [--security-domain <D>] [--label "
            + "<L>] [--comment <C>] [--update] [--value] [--json] [--store <DIR>]",
        options: [
            accessGroupOption,
            .value(
                "url", "URL",
                "scheme://[account@]server[:port][/path]: protocol, account, server, port and path at once (never a "
                    + "password)."
            ),
            .value("server", "S", "The server (kSecAttrServer, security -s); required unless --url."),
            .value(
                "protocol", "P",
                "The protocol as a URL scheme: https, http, ftp, imap, smtp, ssh... (kSecAttrProtocol, security -r)."),
            .value("port", "N", "The port, 1 to 65535 (kSecAttrPort, security -P; default none)."),
            .value("path", "P", "The path, without a leading '/' (kSecAttrPath, security -p)."),
            .value("account", "A", "The account (kSecAttrAccount, security -a)."),
            .value(
                "authentication-type", "T",
                "The authentication type (kSecAttrAuthenticationType: default, httpBasic, httpDigest, htmlForm, "
                    + "ntlm...)."
            ),
            .value("security-domain", "D", "The security domain, an HTTP realm for example (kSecAttrSecurityDomain)."),
            .value("label", "L", "add: a label.").only("add"),
            .value("comment", "C", "add: a comment.").only("add"),
            .flag("update", "add: change the value of an existing item instead of failing (security -U).").only("add"),
            .flag(
                "allow-empty",
                "add: store an empty value (refused otherwise, so that the empty input of a failed command cannot "
                    + "wipe a password)."
            ).only("add"),
            .flag(
                "value",
                "find: print the value alone, exactly as stored (security find-internet-password -w), and a newline "
                    + "after it on a terminal only."
            ).only("find"),
            .flag("json", "add, find, list: print JSON.").only("add", "find", "list")
        ] + protectOptions.map { $0.only("add") },
        positionals: ["SUBCOMMAND"],
        subcommands: ["add", "find", "delete", "list"],
        discussion: """
            An item is unique on (server, protocol, port, path, account, authentication type, security
            domain), as in Apple's keychain: add and delete name all of them (absent ones are empty);
            find and list match the ones given (find --value needs exactly one match).
            add reads the value from standard input (every byte, exactly), or from a prompt on a
            terminal; never from the command line. An existing item is refused (exit 73) unless --update.
            An empty value is refused (exit 65, nothing stored or changed) unless --allow-empty.
            """,
        passphrases: .only(["add", "find"]))

    let arguments: ParsedArguments
    let subcommand: String

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        subcommand = try parseSubcommand(arguments, spec: Self.spec)
        if subcommand != "list" && arguments.value("url") == nil && arguments.value("server") == nil {
            throw UsageError(message: "missing --server <S> or --url <URL>", command: Self.spec.name)
        }
        if arguments.flag("value") && arguments.flag("json") {
            throw UsageError(
                message: "give --value (the raw value) or --json (the attributes), not both", command: Self.spec.name)
        }
    }

    func run() throws {
        let name = Self.spec.name
        switch subcommand {
        case "add":
            let key = try exactKey()
            let pending = try PendingStore(arguments, command: name, unlock: true)
            // Refused before the value is read (it may come from a prompt).
            if let store = pending.existing, !arguments.flag("update"), (try? store.internetPassword(key)) != nil {
                throw duplicateFailure(.internetPassword(key))
            }
            let value = try readPasswordValue(allowEmpty: arguments.flag("allow-empty"))
            let store = try pending.open()
            let label = arguments.value("label"), comment = arguments.value("comment")
            let item: RSAInternetPasswordAttributes
            // --update (security -U): add, and on a duplicate change the existing item instead.
            do {
                item = try store.addInternetPassword(value, for: key, label: label, comment: comment)
            } catch RSAError.duplicateItem where arguments.flag("update") {
                item = try store.updateInternetPassword(key, value: value, label: label, comment: comment)
            } catch RSAError.duplicateItem {
                throw duplicateFailure(.internetPassword(key))
            }
            if arguments.flag("json") { return try printOutput(try jsonText(internetPasswordJSON(item))) }
            try printOutput(
                "\(arguments.flag("update") ? "stored" : "added") internet password: "
                    + "\(terminalSafe(item.key.description)), item id: \(item.itemID)\n"
            )
        case "delete":
            let key = try exactKey()
            try openStore(arguments).deleteInternetPassword(key)
            try printOutput("deleted internet password: \(terminalSafe(key.description))\n")
        case "find":
            let store = try openStore(arguments)
            let items = try requireFound(
                try store.internetPasswords(matching: try query()), "internet password matching the options")
            if arguments.flag("value") {
                guard items.count == 1 else {
                    throw CLIFailure(
                        "\(items.count) internet passwords match "
                            + "(\(items.map { terminalSafe($0.key.description) }.joined(separator: ", "))); name "
                            + "more attributes",
                        .usage)
                }
                let value = try withUnlockedStore(store, arguments, command: name) {
                    try store.internetPasswordValue(items[0].key)
                }
                var bytes = value.bytes
                defer { wipe(&bytes) }
                var sink = RSAFileDescriptorSink(fileDescriptor: STDOUT_FILENO)
                try sink.write(bytes)
                try writePasswordValueEnd(&sink)
                return
            }
            try printItems(items)
        default:
            let items = try openStore(arguments).internetPasswords(matching: try query())
            if items.isEmpty && !arguments.flag("json") {
                return try printOutput("no internet passwords in the store\n")
            }
            try printItems(items)
        }
    }

    /// The exact key add and delete name: --url, then the attribute options over it.
    private func exactKey() throws -> RSAInternetPasswordKey {
        let base = try arguments.value("url").map { try RSAInternetPasswordKey(url: $0) }
        return try RSAInternetPasswordKey(
            server: arguments.value("server") ?? base?.server ?? "",
            protocol: arguments.value("protocol") ?? base?.protocol ?? "",
            port: try port() ?? base?.port ?? 0,
            path: arguments.value("path") ?? base?.path ?? "",
            account: arguments.value("account") ?? base?.account ?? "",
            authenticationType: arguments.value("authentication-type") ?? "",
            securityDomain: arguments.value("security-domain") ?? "")
    }

    /// What find and list match: the attributes given (a URL's parts count as given).
    private func query() throws -> RSAInternetPasswordQuery {
        let base = try arguments.value("url").map { try RSAInternetPasswordKey(url: $0) }
        func nonEmpty(_ text: String?) -> String? { text.flatMap { $0.isEmpty ? nil : $0 } }
        return RSAInternetPasswordQuery(
            server: arguments.value("server") ?? base?.server,
            protocol: arguments.value("protocol") ?? nonEmpty(base?.protocol),
            port: try port() ?? base.flatMap { $0.port == 0 ? nil : $0.port },
            path: arguments.value("path") ?? nonEmpty(base?.path),
            account: arguments.value("account") ?? nonEmpty(base?.account),
            authenticationType: arguments.value("authentication-type"),
            securityDomain: arguments.value("security-domain"))
    }

    private func port() throws -> Int? {
        guard let text = arguments.value("port") else { return nil }
        guard let port = Int(text), (1...65535).contains(port) else {
            throw UsageError(message: "--port expects 1 to 65535, got '\(terminalSafe(text))'", command: Self.spec.name)
        }
        return port
    }

    private func printItems(_ items: [RSAInternetPasswordAttributes]) throws {
        if arguments.flag("json") { return try printOutput(try jsonText(items.map(internetPasswordJSON))) }
        try printOutput(items.map(internetPasswordText).joined(separator: "\n"))
    }
}

/// The attribute lines of one internet password (never the value).
func internetPasswordText(_ item: RSAInternetPasswordAttributes) -> String {
    let key = item.key
    func shown(_ text: String) -> String { text.isEmpty ? "(none)" : terminalSafe(text) }
    return """
        class: internet password
        server: \(terminalSafe(key.server))
        protocol: \(shown(key.protocol))
        port: \(key.port == 0 ? "(none)" : String(key.port))
        path: \(shown(key.path))
        account: \(terminalSafe(key.account))
        authentication type: \(shown(key.authenticationType))
        security domain: \(shown(key.securityDomain))

        """
            + passwordItemLines(
                label: item.label, comment: item.comment, valueByteCount: item.valueByteCount,
                itemID: item.itemID, created: item.creationDate, modified: item.modificationDate)
            + "access group: \(item.accessGroup)\n"
}

/// The JSON object of one internet password (never the value), in the JSON names of docs/scripting.md.
func internetPasswordJSON(_ item: RSAInternetPasswordAttributes) -> [String: Any] {
    let key = item.key
    let attributes: [String: Any] = [
        "class": "internetPassword", "server": key.server, "protocol": key.protocol, "port": key.port, "path": key.path,
        "account": key.account, "authenticationType": key.authenticationType, "securityDomain": key.securityDomain,
        "accessGroup": item.accessGroup
    ]
    return attributes.merging(
        passwordItemJSON(
            label: item.label, comment: item.comment, valueByteCount: item.valueByteCount,
            itemID: item.itemID, created: item.creationDate, modified: item.modificationDate)
    ) { a, _ in a }
}
