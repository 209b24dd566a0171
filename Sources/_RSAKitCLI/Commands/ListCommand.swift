import RSAKit

/// `rsakit list`: every item of every class with its attributes.
struct ListCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "list",
        overview: "List the items in the store (keys, generic passwords, then certificates); needs no passphrase.",
        usage: "rsakit list [--class key|password|certificate] [--json] [--store <DIR>]",
        options: [
            accessGroupOption,
            systemOption,
            .value("class", "CLASS", "Only items of this class: key, password, internet-password or certificate.")
                .choices(["key", "password", "internet-password", "certificate"]),
            .flag("json", "Print a JSON array of items."),
            // For shell completion: one name per line, no header, nothing for a missing store.
            .value(
                "names", "KIND",
                "tag, label (certificates), identity (labels of certificates with their private key), service, "
                    + "account or server: print those names, one per line."
            ).choices(ListCommand.nameKinds).hiddenFromHelp()
        ],
        passphrases: .none)

    /// What `--names` prints.
    static let nameKinds = ["tag", "label", "identity", "service", "account", "server"]

    let arguments: ParsedArguments
    let classes: Set<String>
    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        if let kind = arguments.value("names"), !Self.nameKinds.contains(kind) {
            throw UsageError(
                message:
                    "--names must be one of \(Self.nameKinds.joined(separator: ", ")), got '\(terminalSafe(kind))'",
                command: Self.spec.name)
        }
        if let name = arguments.value("class") {
            guard ["key", "password", "internet-password", "certificate"].contains(name) else {
                throw UsageError(
                    message: "--class must be key, password, internet-password or certificate, got '\(name)'",
                    command: Self.spec.name)
            }
            classes = [name]
        } else {
            classes = ["key", "password", "internet-password", "certificate"]
        }
    }

    func run() throws {
        if arguments.flag("system") {
            for option in ["class", "json", "names", "access-group"] where arguments.givenOptionNames.contains(option) {
                throw UsageError(message: "--\(option) does not apply with --system", command: Self.spec.name)
            }
            return try listThroughSystemAgent(arguments, command: Self.spec.name)
        }
        if let kind = arguments.value("names") {
            return try printNames(kind)
        }
        let listing = try openStore(arguments).allItems()
        for problem in listing.problems { printWarning(problem.description) }
        let keys = classes.contains("key") ? listing.keys : []
        let passwords = classes.contains("password") ? listing.passwords : []
        let internetPasswords = classes.contains("internet-password") ? listing.internetPasswords : []
        let certificates = classes.contains("certificate") ? listing.certificates : []
        if arguments.flag("json") {
            try printOutput(
                try jsonText(
                    try keys.map(itemJSON) + passwords.map(passwordJSON)
                        + internetPasswords.map(internetPasswordJSON) + certificates.map(certificateJSON)))
            return
        }
        if keys.isEmpty && passwords.isEmpty && internetPasswords.isEmpty && certificates.isEmpty {
            let empty: String
            switch classes {
            case ["password"]: empty = "no generic passwords in the store\n"
            case ["internet-password"]: empty = "no internet passwords in the store\n"
            case ["certificate"]: empty = "no certificates in the store\n"
            case ["key"]: empty = "no keys in the store\n"
            default: empty = "no items in the store\n"
            }
            try printOutput(empty)
            return
        }
        // Tags, labels, services and accounts are escaped (terminalSafe): an item cannot forge
        // a row or send escapes to the terminal. Names that look alike (see lookAlikes) show
        // their non-ASCII characters as \u{...} escapes.
        let alike = Self.lookAlikes(
            keys.map(\.applicationTag) + keys.compactMap(\.label) + passwords.map(\.service)
                + passwords.map(\.account) + passwords.compactMap(\.label))
        if !alike.isEmpty {
            printWarning(
                "some names differ only in their Unicode form (NFC and NFD, such as a precomposed \"é\" and \"e\" "
                    + "with a combining accent): they are shown with \\u{...} escapes, and each must be given byte "
                    + "for byte"
            )
        }
        func shown(_ name: String) -> String { Self.shown(name, lookAlikes: alike) }
        var text = ""
        if !keys.isEmpty {
            text += "CLASS    BITS   " + padded("FINGERPRINT", 52) + "TAG\n"
            for item in keys {
                let keyClass = padded(item.keyClass.rawValue, 8)
                let bits = padded(String(item.keySizeInBits), 6)
                text += "\(keyClass) \(bits) \(item.fingerprint.base64String)  \(shown(item.applicationTag))"
                if let label = item.label { text += "  (\(shown(label)))" }
                // Where a private key lives when it is not in the store.
                if let token = item.token {
                    text +=
                        token.tpmKey.map { "  [tpm: \($0.usage.canSign ? "sign" : "decrypt")]" }
                        ?? "  [token: \(terminalSafe(token.tokenLabel))]"
                }
                text += groupSuffix(item.accessGroup) + "\n"
            }
        }
        if !passwords.isEmpty {
            if !text.isEmpty { text += "\n" }
            text += "CLASS    SERVICE / ACCOUNT\n"
            for item in passwords {
                text += "password \(shown(item.service)) / \(shown(item.account))"
                if let label = item.label { text += "  (\(shown(label)))" }
                text += groupSuffix(item.accessGroup) + "\n"
            }
        }
        if !internetPasswords.isEmpty {
            if !text.isEmpty { text += "\n" }
            text += "CLASS             URL\n"
            for item in internetPasswords {
                text += "internet-password \(terminalSafe(item.key.description))"
                if let label = item.label { text += "  (\(terminalSafe(label)))" }
                text += groupSuffix(item.accessGroup) + "\n"
            }
        }
        if !certificates.isEmpty {
            if !text.isEmpty { text += "\n" }
            text += certificateTable(certificates)
        }
        try printOutput(text)
    }

    /// `--names KIND`: the distinct names of that kind in the store, sorted, one per line, as
    /// stored (not escaped: a completion script inserts them, quoted, and must get the name
    /// back). A name holding a newline would read as two lines, and one holding another
    /// control character could drive the terminal when the shell lists it, so those are left
    /// out; a tab stays. Reads only item attributes, which a protected store keeps in the
    /// clear, so it never asks for a passphrase; a missing store prints nothing (it is never
    /// created). Meant for completion scripts, which treat every line as data.
    private func printNames(_ kind: String) throws {
        guard try storeExists(arguments) else { return }
        let store = try openStore(arguments)
        let listing = try store.allItems()
        let names: [String?]
        switch kind {
        case "tag": names = listing.keys.map(\.applicationTag)
        case "label": names = listing.certificates.map(\.label)
        case "identity":
            // From the listing, as allIdentities() pairs them (a certificate with a stored private
            // key of its public key), so that a damaged item costs its name only, not the list.
            let privateKeys = Set(listing.keys.filter { $0.keyClass == .private }.map(\.fingerprint))
            names = listing.certificates.filter { $0.publicKeyFingerprint.map(privateKeys.contains) ?? false }.map(
                \.label)
        case "service": names = listing.passwords.map(\.service)
        case "account": names = listing.passwords.map(\.account) + listing.internetPasswords.map(\.key.account)
        default: names = listing.internetPasswords.map(\.key.server)
        }
        let listable = names.compactMap { $0 }.filter { name in
            !name.isEmpty && !name.unicodeScalars.contains { $0 != "\t" && isTerminalControl($0) }
        }
        // Distinct byte for byte: a Set of Strings would merge the NFC and NFD forms of a name.
        let lines = Set(listable.map { Array($0.utf8) }).sorted { $0.lexicographicallyPrecedes($1) }
        if !lines.isEmpty {
            try printOutput(lines.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n") + "\n")
        }
    }

    /// The UTF-8 forms of names that another name equals in Swift's sense (canonical
    /// equivalence: NFC "Caf\u{E9}" and NFD "Cafe\u{301}") without being the same bytes. The
    /// store keeps such names apart, byte for byte, while a terminal shows them alike.
    static func lookAlikes(_ names: [String]) -> Set<[UInt8]> {
        var forms: [String: Set<[UInt8]>] = [:]
        for name in names { forms[name, default: []].insert(Array(name.utf8)) }
        return Set(forms.values.filter { $0.count > 1 }.flatMap { $0 })
    }

    /// `name` for a table: terminal-safe, and for a look-alike every non-ASCII character as
    /// a `\u{...}` escape, so that the two forms read differently.
    static func shown(_ name: String, lookAlikes: Set<[UInt8]>) -> String {
        let safe = terminalSafe(name)
        guard lookAlikes.contains(Array(name.utf8)) else { return safe }
        return safe.unicodeScalars.map {
            $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16, uppercase: true))}"
        }.joined()
    }
}
