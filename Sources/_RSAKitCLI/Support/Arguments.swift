/// A tiny argument parser in the manner of swift-argument-parser's layout (which cannot be
/// fetched here): each command declares its options, parsing validates them, and help is
/// printed in fixed sections (OVERVIEW, USAGE, OPTIONS).

/// One `--name [VALUE]` option of a command.
@_spi(Fuzzing) public struct OptionSpec: Sendable {
    @_spi(Fuzzing) public let name: String
    @_spi(Fuzzing) public let valueName: String?
    let help: String
    /// Whether the option may be given several times (`--anchor A --anchor B`).
    var repeatable = false
    /// The subcommands of a command group that take this option (nil: all of them);
    /// ``parseSubcommand(_:spec:)`` refuses it for the others.
    var subcommands: [String]? = nil
    /// Accepted but left out of help, man pages and completion (machine interfaces such as
    /// `list --names`).
    var hidden = false

    /// The values the option takes, when they are a fixed list (`--padding pkcs1|oaep`): what
    /// completion offers. Parsing still checks values where the command reads them.
    var choices: [String] = []

    /// This option with a fixed list of values, for completion.
    func choices(_ values: [String]) -> OptionSpec {
        var copy = self
        copy.choices = values
        return copy
    }

    /// This option, hidden from help, man pages and completion.
    func hiddenFromHelp() -> OptionSpec {
        var copy = self
        copy.hidden = true
        return copy
    }

    /// This option, taken only by `names` (subcommands of its group).
    func only(_ names: String...) -> OptionSpec { only(names) }

    /// ``only(_:)-(String...)`` with the names as an array.
    func only(_ names: [String]) -> OptionSpec {
        var copy = self
        copy.subcommands = names
        return copy
    }

    static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help)
    }

    static func value(_ name: String, _ valueName: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help)
    }

    /// A value option that may be repeated; read all values with `ParsedArguments.values(_:)`.
    static func repeated(_ name: String, _ valueName: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, repeatable: true)
    }
}

/// What a command accepts, and its help text.
@_spi(Fuzzing) public struct CommandSpec: Sendable {
    @_spi(Fuzzing) public let name: String
    let overview: String
    let usage: String
    @_spi(Fuzzing) public let options: [OptionSpec]
    /// Names of positional arguments, in order (for help and count checks).
    @_spi(Fuzzing) public let positionals: [String]
    /// The subcommands of a command group (`cert add`, `agent start`...), in help order;
    /// empty for a plain command. ``parseSubcommand(_:spec:)`` checks the first positional
    /// against them; completion offers them.
    let subcommands: [String]
    /// Subcommands accepted but not shown (`agent serve`, which `agent start` runs).
    let hiddenSubcommands: [String]
    /// Extra help text printed after OPTIONS (examples, notes), may be empty.
    let discussion: String

    /// Which of a command's subcommands read passphrases (`--passin`, `--store-passin`).
    enum PassphraseUse {
        /// The command (every subcommand) may read one.
        case all
        /// None does: the options are refused as unknown.
        case none
        /// Only these subcommands do (others refuse the options, naming them).
        case only([String])
    }

    init(
        name: String, overview: String, usage: String, options: [OptionSpec],
        positionals: [String] = [], subcommands: [String] = [], hiddenSubcommands: [String] = [],
        discussion: String = "", passphrases: PassphraseUse = .all
    ) {
        self.name = name
        self.subcommands = subcommands
        self.hiddenSubcommands = hiddenSubcommands
        self.overview = overview
        self.usage = usage
        var passphraseOptions: [OptionSpec] = [
            .value(
                "passin", "SPEC",
                "Passphrase of the file being read (PKCS#12, encrypted key): pass:TEXT (visible in ps; tests only), "
                    + "env:VAR, file:PATH, fd:N or stdin (default: $RSAKIT_PASSIN, else a prompt on the terminal). "
                    + "Also the store's, when --store-passin and $RSAKIT_STORE_PASSIN are absent."
            ),
            .value(
                "store-passin", "SPEC",
                "Passphrase of a protected key store, same forms as --passin (default: $RSAKIT_STORE_PASSIN, else "
                    + "--passin as above, else a prompt)."
            )
        ]
        switch passphrases {
        case .all: break
        case .none: passphraseOptions = []
        case let .only(subcommands): passphraseOptions = passphraseOptions.map { $0.only(subcommands) }
        }
        self.options =
            options + [
                .value(
                    "store", "DIR",
                    "Key store folder (default: $RSAKIT_STORE, else $XDG_DATA_HOME/rsakit, else ~/.local/share/rsakit)."
                ),
                .flag(
                    "allow-insecure-store",
                    "Open a store whose private files or folders are open to group or others (not recommended)."),
                .flag("quiet", "Show no progress on stderr (progress is only ever shown on a terminal).")
            ] + passphraseOptions + [
                .flag("help", "Show this help.")
            ]
        self.positionals = positionals
        self.discussion = discussion
    }

    /// The options help, man pages and completion show (not the hidden ones).
    var visibleOptions: [OptionSpec] { options.filter { !$0.hidden } }

    @_spi(Fuzzing) public var helpText: String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: \(usage)\n\nOPTIONS:\n"
        let rows = visibleOptions.map { option -> (String, String) in
            let short = shortOptions.first(where: { $0.value == option.name }).map { "-\($0.key), " } ?? ""
            return (short + "--\(option.name)" + (option.valueName.map { " <\($0)>" } ?? ""), option.help)
        }
        let width = min(28, (rows.map { $0.0.count }.max() ?? 0) + 2)
        for (left, right) in rows {
            let padding =
                left.count < width
                ? String(repeating: " ", count: width - left.count) : "\n" + String(repeating: " ", count: width + 2)
            text += "  \(left)\(padding)\(right)\n"
        }
        if !discussion.isEmpty { text += "\n\(discussion)\n" }
        return text
    }
}

/// One-letter options, where users expect them (as openssl, age, curl): each stands for
/// its long option in every command that has that option.
let shortOptions: [Character: String] = [
    "o": "out", "i": "in", "a": "armor", "t": "tag", "k": "key", "q": "quiet", "v": "verbose"
]

/// A usage error: exit status 64, the message, and a pointer to help.
@_spi(Fuzzing) public struct UsageError: Error, CustomStringConvertible {
    let message: String
    let command: String?
    public var description: String { message }
}

/// Parsed options of one command.
@_spi(Fuzzing) public struct ParsedArguments: Sendable {
    private(set) var values: [String: String] = [:]
    private(set) var repeatedValues: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    @_spi(Fuzzing) public private(set) var positionals: [String] = []

    /// Parse `arguments` (without the command name) against `spec`.
    /// Accepts `--name value`, `--name=value`, flags, positionals, `-` as a positional or
    /// value, and `--` to end options. Unknown or repeated options are usage errors.
    @_spi(Fuzzing) public init(_ arguments: [String], spec: CommandSpec) throws {
        var i = 0
        var optionsEnded = false
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" { optionsEnded = true; continue }
            if argument == "-h" { flags.insert("help"); continue }
            var name: String
            if !argument.hasPrefix("--") {
                // -o FILE, -oFILE; flags may not be bundled (-aq is not accepted).
                let letter = argument.dropFirst().first!
                guard let long = shortOptions[letter], spec.options.contains(where: { $0.name == long }) else {
                    let known = spec.options.map(\.name)
                    throw UsageError(
                        message: "unknown option '\(argument)'"
                            + didYouMean(String(argument.drop { $0 == "-" }), known, prefix: "--"), command: spec.name)
                }
                let rest = argument.dropFirst(2)
                name = rest.isEmpty ? long : long + "=" + rest
            } else {
                name = String(argument.dropFirst(2))
            }
            var inlineValue: String?
            // Split at the first "=" scalar, not Character: "=" followed by a combining mark
            // is one Character, and `--label=\u{301}x` must still give the value "\u{301}x".
            let scalars = name.unicodeScalars
            if let eq = scalars.firstIndex(of: "=") {
                inlineValue = String(scalars[scalars.index(after: eq)...])
                name = String(scalars[..<eq])
            }
            guard let option = spec.options.first(where: { $0.name == name }) else {
                throw UsageError(
                    message: "unknown option '--\(name)'" + didYouMean(name, spec.options.map(\.name), prefix: "--"),
                    command: spec.name)
            }
            if option.valueName == nil {
                guard inlineValue == nil else {
                    throw UsageError(message: "option '--\(name)' takes no value", command: spec.name)
                }
                flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard i < arguments.count else {
                    throw UsageError(
                        message: "option '--\(name)' needs a value <\(option.valueName!)>", command: spec.name)
                }
                value = arguments[i]
                i += 1
            }
            if option.repeatable {
                repeatedValues[name, default: []].append(value)
                if values[name] == nil { values[name] = value }
                continue
            }
            guard values[name] == nil else {
                throw UsageError(message: "option '--\(name)' given more than once", command: spec.name)
            }
            values[name] = value
        }
        if !flags.contains("help") && positionals.count > spec.positionals.count {
            throw UsageError(
                message: "unexpected argument '\(positionals[spec.positionals.count])'", command: spec.name)
        }
    }

    /// The names of every option given (values, repeated values and flags), without "--".
    var givenOptionNames: Set<String> { Set(values.keys).union(repeatedValues.keys).union(flags) }

    @_spi(Fuzzing) public func value(_ name: String) -> String? { values[name] }
    /// Every value of a repeatable option, in command-line order.
    func values(_ name: String) -> [String] { repeatedValues[name] ?? values[name].map { [$0] } ?? [] }
    @_spi(Fuzzing) public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// A required option's value, or a usage error naming it.
    func required(_ name: String, _ command: String) throws -> String {
        guard let value = values[name] else {
            throw UsageError(message: "missing required option '--\(name)'", command: command)
        }
        return value
    }

    /// An integer option's value (nil when absent), or a usage error.
    func integer(_ name: String, _ command: String) throws -> Int? {
        guard let text = values[name] else { return nil }
        guard let number = Int(text) else {
            throw UsageError(message: "option '--\(name)' expects an integer, got '\(text)'", command: command)
        }
        return number
    }
}
