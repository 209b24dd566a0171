/// What shell completion offers for rsakit, read from the commands' ``CommandSpec``s (the same
/// source as `rsakit help` and the man pages): commands, subcommands, options, and for each
/// option's value a fixed list, files, folders, or names read from the current store through
/// `rsakit list --names KIND` (which never unlocks or creates a store).
struct CompletionModel {
    /// How an option's value is completed.
    enum Value: Equatable {
        /// A flag: no value.
        case none
        /// One of a fixed list.
        case choices([String])
        /// A file name.
        case file
        /// A folder name.
        case directory
        /// Names of this kind in the store (`list --names KIND`).
        case storeNames(String)
        /// Free text: nothing to offer.
        case text
    }

    struct Option {
        let name: String
        let short: Character?
        let help: String
        let value: Value
    }

    struct Command {
        let name: String
        let overview: String
        let subcommands: [String]
        let options: [Option]
        /// Whether positional arguments (after the subcommand) are files (FILE, CERT).
        let takesFiles: Bool
    }

    let commands: [Command]

    init(commands specs: [CommandSpec] = RSAKitCommandLine.commands.map { $0.spec }) {
        commands = specs.map { spec in
            Command(
                name: spec.name, overview: spec.overview, subcommands: spec.subcommands,
                options: spec.visibleOptions.map { Self.option($0, command: spec.name) },
                takesFiles: spec.positionals.contains { ["FILE", "CERT"].contains($0) })
        }
    }

    /// The options whose values name store items, by option name.
    static let storeNameOptions: [String: String] = [
        "tag": "tag", "private-tag": "tag", "service": "service", "account": "account", "server": "server",
        "cert-label": "label", "identity": "identity"
    ]

    /// The commands whose `--label` names a stored item, with the kind of name: certificates
    /// for `cert`, identities (certificates with their private key) for `identity`. Elsewhere
    /// it is a new item's free text or the OAEP label, where stored labels would be wrong guesses.
    static let storedLabelKinds: [String: String] = ["cert": "label", "identity": "identity"]

    private static func option(_ spec: OptionSpec, command: String) -> Option {
        let value: Value
        if spec.valueName == nil {
            value = .none
        } else if !spec.choices.isEmpty {
            value = .choices(spec.choices)
        } else if spec.name == "label", let kind = storedLabelKinds[command] {
            value = .storeNames(kind)
        } else if let kind = storeNameOptions[spec.name] {
            value = .storeNames(kind)
        } else if spec.valueName == "DIR" {
            value = .directory
        } else if ["FILE", "PATH", "CERT"].contains(spec.valueName!) {
            value = .file
        } else {
            value = .text
        }
        return Option(
            name: spec.name, short: shortOptions.first { $0.value == spec.name }?.key,
            help: firstSentence(spec.help), value: value)
    }

    /// The first sentence of a help text, at most 70 characters, for menus.
    static func firstSentence(_ help: String) -> String {
        var sentence = help.split(separator: ".", maxSplits: 1).first.map(String.init) ?? help
        if let paren = sentence.firstIndex(of: "("), sentence.distance(from: sentence.startIndex, to: paren) > 20 {
            sentence = String(sentence[..<paren])
        }
        sentence = String(sentence.reversed().drop { $0 == " " }.reversed())
        return sentence.count > 70 ? String(sentence.prefix(67)) + "..." : sentence
    }
}

/// Quoted for a shell's single quotes: ' becomes '\''.
func singleQuoted(_ text: String) -> String {
    "'" + text.replacing("'", with: "'\\''") + "'"
}
