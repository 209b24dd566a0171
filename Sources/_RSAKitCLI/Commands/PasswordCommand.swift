#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// `rsakit password add | find | delete | list`: generic passwords, after macOS `security`
/// (`add-generic-password -s -a -U`, `find-generic-password -w`, `delete-generic-password`).
struct PasswordCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "password",
        overview: "Add, find, delete or list generic passwords (service + account).",
        usage:
            "rsakit password add|find|delete|list [--service <S>] [--account <A>] [--label <L>] [--comment <C>] "
            + "[--update] [--allow-empty] [--value] [--json] [--store <DIR>]",
        options: [
            accessGroupOption,
            systemOption.only("add", "find"),
            .value("service", "S", "The service (kSecAttrService); required except for list."),
            .value("account", "A", "The account (kSecAttrAccount); required for add and delete.").only(
                "add", "find", "delete"),
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
                "find: print the value alone, exactly as stored (security find-generic-password -w), and a newline "
                    + "after it on a terminal only."
            ).only("find"),
            .flag("json", "add, find, list: print JSON (add: the stored item's attributes).").only(
                "add", "find", "list")
        ] + protectOptions.map { $0.only("add") },
        positionals: ["SUBCOMMAND"],
        subcommands: ["add", "find", "delete", "list"],
        discussion: """
            add reads the value from standard input (every byte, exactly; use printf, not echo, to avoid a
            newline), or, when standard input is a terminal, from a prompt without echo. Never from the command line.
            An empty value is refused (exit 65, nothing stored or changed) unless --allow-empty: a script whose
            upstream command failed must not wipe a working password.
            An existing (service, account) is refused (exit 73) unless --update; a missing one exits 66.
            find prints the attributes; the value only with --value (it needs the passphrase of a protected store).
            With --system, add and find (--value) go to the system keychain's agent, in the access group
            named (at most one --access-group; add without one uses this user's only allowed group).
            """,
        passphrases: .only(["add", "find"]))

    let arguments: ParsedArguments
    let subcommand: String

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        let sub = try parseSubcommand(arguments, spec: Self.spec)
        subcommand = sub
        if sub != "list" { _ = try arguments.required("service", Self.spec.name) }
        if sub == "add" || sub == "delete" { _ = try arguments.required("account", Self.spec.name) }
        if arguments.flag("value") && arguments.flag("json") {
            throw UsageError(
                message: "give --value (the raw value) or --json (the attributes), not both", command: Self.spec.name)
        }
    }

    func run() throws {
        if arguments.flag("system") {
            return try passwordThroughSystemAgent(arguments, subcommand: subcommand, command: Self.spec.name)
        }
        if subcommand == "add" { return try add() }
        let store = try openStore(arguments)
        let name = Self.spec.name
        let service = arguments.value("service") ?? ""
        let account = arguments.value("account") ?? ""
        switch subcommand {
        case "find":
            let items: [RSAGenericPasswordAttributes]
            if let account = arguments.value("account") {
                items = [try store.genericPassword(service: service, account: account)]
            } else {
                items = try requireFound(
                    try store.genericPasswords(service: service), "generic password for service \"\(service)\"")
            }
            if arguments.flag("value") {
                guard items.count == 1 else {
                    throw CLIFailure("service \"\(service)\" has \(items.count) accounts; give --account", .usage)
                }
                let value = try withUnlockedStore(store, arguments, command: name) {
                    try store.genericPasswordValue(service: service, account: items[0].account)
                }
                var sink = RSAFileDescriptorSink(fileDescriptor: STDOUT_FILENO)
                var bytes = value.bytes
                defer { wipe(&bytes) }
                try sink.write(bytes)
                try writePasswordValueEnd(&sink)
                return
            }
            try printPasswords(items)
        case "delete":
            try store.deleteGenericPassword(service: service, account: account)
            try printOutput(
                "deleted generic password: service: \(terminalSafe(service)), account: \(terminalSafe(account))\n")
        default:
            var items = try store.allItems().passwords
            if let only = arguments.value("service") {
                items = items.filter { $0.service.utf8.elementsEqual(only.utf8) }
            }
            if items.isEmpty && !arguments.flag("json") {
                try printOutput("no generic passwords in the store\n")
                return
            }
            try printPasswords(items)
        }
    }

    /// `password add`: the store's passphrase first, then the value (both may come from
    /// standard input, in that order); a missing store is created only once the value is read.
    /// With --update (`security add-generic-password -U`) an existing item is changed instead:
    /// the library's add only adds, so this is add, then update on `RSAError.duplicateItem`.
    private func add() throws {
        let service = arguments.value("service") ?? "", account = arguments.value("account") ?? ""
        let query = RSAKeychainItemQuery.genericPassword(service: service, account: account)
        let pending = try PendingStore(arguments, command: Self.spec.name, unlock: true)
        // Refused before the value is read (it may come from a prompt).
        if let store = pending.existing, !arguments.flag("update"),
            (try? store.genericPassword(service: service, account: account)) != nil
        {
            throw duplicateFailure(query)
        }
        let value = try readPasswordValue(allowEmpty: arguments.flag("allow-empty"))
        let store = try pending.open()
        let label = arguments.value("label"), comment = arguments.value("comment")
        let item: RSAGenericPasswordAttributes
        do {
            item = try store.addGenericPassword(
                value, service: service, account: account, label: label, comment: comment)
        } catch RSAError.duplicateItem where arguments.flag("update") {
            item = try store.updateGenericPassword(
                service: service, account: account, value: value, label: label, comment: comment)
        } catch RSAError.duplicateItem {
            throw duplicateFailure(query)
        }
        if arguments.flag("json") { return try printOutput(try jsonText(passwordJSON(item))) }
        try printOutput(
            "\(arguments.flag("update") ? "stored" : "added") generic password: service: "
                + "\(terminalSafe(item.service)), account: \(terminalSafe(item.account)), item id: \(item.itemID)\n"
        )
    }

    private func printPasswords(_ items: [RSAGenericPasswordAttributes]) throws {
        if arguments.flag("json") {
            try printOutput(try jsonText(items.map(passwordJSON)))
            return
        }
        try printOutput(items.map(passwordText).joined(separator: "\n"))
    }
}

/// "a generic password ... already exists (use --update to change its value)" (73): the
/// password commands' refusal of an existing item, naming the option that changes it.
func duplicateFailure(_ query: RSAKeychainItemQuery) -> CLIFailure {
    CLIFailure(RSAError.duplicateItem(query).description + " (use --update to change its value)", .alreadyExists)
}

/// The attribute lines of one generic password (never the value).
func passwordText(_ item: RSAGenericPasswordAttributes) -> String {
    """
    class: generic password
    service: \(terminalSafe(item.service))
    account: \(terminalSafe(item.account))

    """
        + passwordItemLines(
            label: item.label, comment: item.comment, valueByteCount: item.valueByteCount,
            itemID: item.itemID, created: item.creationDate, modified: item.modificationDate)
        + "access group: \(item.accessGroup)\n"
}

/// The lines both password classes end with: label, comment, value length, id, dates.
func passwordItemLines(
    label: String?, comment: String?, valueByteCount: Int, itemID: String, created: Date, modified: Date
) -> String {
    """
    label: \(label.map(terminalSafe) ?? "(none)")
    comment: \(comment.map(terminalSafe) ?? "(none)")
    value: \(valueByteCount) bytes
    item id: \(itemID)
    created: \(iso8601(created))
    modified: \(iso8601(modified))

    """
}

/// The JSON object of one generic password (never the value), in the names of the JSON table (docs/scripting.md).
func passwordJSON(_ item: RSAGenericPasswordAttributes) -> [String: Any] {
    ["class": "genericPassword", "service": item.service, "account": item.account, "accessGroup": item.accessGroup]
        .merging(
            passwordItemJSON(
                label: item.label, comment: item.comment, valueByteCount: item.valueByteCount,
                itemID: item.itemID, created: item.creationDate, modified: item.modificationDate)
        ) { a, _ in a }
}

/// The JSON fields both password classes share (label and comment null when absent).
func passwordItemJSON(
    label: String?, comment: String?, valueByteCount: Int, itemID: String, created: Date, modified: Date
) -> [String: Any] {
    [
        "label": label as Any? ?? JSONValue.null,
        "comment": comment as Any? ?? JSONValue.null,
        "valueBytes": valueByteCount,
        "itemID": itemID,
        "creationDate": rfc3339(created),
        "modificationDate": rfc3339(modified)
    ]
}

/// After a `--value` printed exactly as stored: a newline when standard output is a terminal
/// (as `security find-generic-password -w` does), so the shell prompt does not run into it;
/// nothing otherwise, so that a pipe or file gets the value's bytes alone.
func writePasswordValueEnd(_ sink: inout RSAFileDescriptorSink) throws {
    if isatty(STDOUT_FILENO) == 1 { try sink.write([0x0A]) }
}

/// A password value for `add`: all of standard input (every byte, at most
/// ``RSAKeyStore/maximumPasswordByteCount``), or a no-echo prompt, asked twice, on a terminal.
/// - Throws: `CLIFailure` (65) for an empty value unless `allowEmpty`: an empty standard input
///   is most often a failed command upstream, and storing it would wipe a working password.
func readPasswordValue(allowEmpty: Bool) throws -> RSASecretBytes {
    let value = try readPasswordValueBytes()
    guard allowEmpty || !value.isEmpty else {
        let source = isatty(STDIN_FILENO) == 1 ? "the value typed" : "the value on standard input"
        throw CLIFailure(
            "\(source) is empty; nothing was stored (give --allow-empty to store an empty value)", .dataError)
    }
    return value
}

private func readPasswordValueBytes() throws -> RSASecretBytes {
    if isatty(STDIN_FILENO) == 1 {
        return try Passphrase.prompted(
            "Password value: ", confirm: true, hint: "the value on standard input", entries: "values")
    }
    var bytes = [UInt8](repeating: 0, count: RSAKeyStore.maximumPasswordByteCount + 1)
    defer { wipe(&bytes) }
    var total = 0
    while total < bytes.count {
        let n = bytes.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress! + total, $0.count - total) }
        if n < 0 {
            if errno == EINTR { continue }
            throw CLIFailure(
                "cannot read the value from standard input: \(String(cString: strerror(errno)).lowercased())", .failure)
        }
        if n == 0 { break }
        total += n
    }
    guard total <= RSAKeyStore.maximumPasswordByteCount else {
        throw CLIFailure("the value is longer than \(RSAKeyStore.maximumPasswordByteCount) bytes", .dataError)
    }
    return RSASecretBytes(copying: bytes[0..<total])
}
