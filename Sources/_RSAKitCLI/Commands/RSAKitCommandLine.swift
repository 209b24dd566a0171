import RSAKit

/// One subcommand: a spec (options and help), a validating initialiser, and `run`.
/// `SendableMetatype`: the command list below is a global of metatypes, shared by any thread.
@_spi(Fuzzing) public protocol RSAKitCommand: SendableMetatype {
    static var spec: CommandSpec { get }
    /// Validate the parsed options (usage errors here exit 64 before any work).
    init(_ arguments: ParsedArguments) throws
    /// Do the work.
    func run() throws
}

/// Dispatch to subcommands; map every error to one stderr line and an exit status.
@_spi(Fuzzing) public enum RSAKitCommandLine {
    static let version = "0.1.0"

    @_spi(Fuzzing) public static let commands: [RSAKitCommand.Type] = [
        GenPairCommand.self, EncryptCommand.self, DecryptCommand.self, ImportCommand.self,
        ExportCommand.self, ListCommand.self, ShowCommand.self, DeleteCommand.self,
        SignCommand.self, VerifyCommand.self,
        StoreCommand.self, PasswordCommand.self, InternetPasswordCommand.self, GitCredentialCommand.self,
        AgentCommand.self, AccessGroupCommand.self, CertCommand.self,
        CRLCommand.self, TrustCommand.self, IdentityCommand.self,
        TLSCommand.self, FetchCommand.self, CompletionCommand.self
    ]

    /// Every command name, for "did you mean".
    static var commandNames: [String] { commands.map { $0.spec.name } + ["help"] }

    static var mainHelp: String {
        var text = """
            OVERVIEW: RSA encryption (PKCS#1 v1.5 and OAEP) with a tagged key store, interoperable with
            iOS (SecKeyEncrypt), Java and OpenSSL.

            USAGE: rsakit <command> [options]

            OPTIONS:
              -V, --version             Show the version of rsakit and of the libraries it runs with.
              -h, --help                Show this help.

            SUBCOMMANDS:

            """
        for command in commands {
            let name = command.spec.name
            text += "  \(name)\(String(repeating: " ", count: max(2, 26 - name.count)))\(command.spec.overview)\n"
        }
        text += "  help [COMMAND]            Show help for a command.\n"
        text += "\nSee 'rsakit help <command>' for a command's options.\n"
        return text
    }

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let first = arguments.first else {
            // Like git and swift-argument-parser: the summary, on stderr, and exit 64.
            printError(mainHelp + "\nrsakit: error: missing command\n")
            return .usage
        }
        do {
            switch first {
            case "--version", "-V", "version":
                try printOutput(VersionInfo.text)
                return .success
            case "--help", "-h":
                try printOutput(mainHelp)
                return .success
            case "help" where arguments.count >= 2 && arguments[1] == "--man-pages":
                // Not in the help: scripts/install.sh and package-deb.sh render the manual.
                guard arguments.count == 3 else {
                    throw UsageError(message: "help --man-pages takes one folder", command: nil)
                }
                for page in ManPages.all() {
                    try writeOutput(Array(page.text.utf8), to: arguments[2] + "/" + page.name)
                }
                return .success
            case "help":
                guard arguments.count <= 2 else {
                    throw UsageError(message: "help takes at most one command name", command: nil)
                }
                if arguments.count == 2 && arguments[1] != "help" {
                    guard let command = commands.first(where: { $0.spec.name == arguments[1] }) else {
                        throw UsageError(
                            message: "unknown command '\(arguments[1])'" + didYouMean(arguments[1], commandNames),
                            command: nil)
                    }
                    try printOutput(command.spec.helpText)
                } else {
                    try printOutput(mainHelp)
                }
                return .success
            default:
                if first.hasPrefix("-"),
                    let named = arguments.first(where: { name in commands.contains { $0.spec.name == name } })
                {
                    let rest = arguments.filter { $0 != named }.joined(separator: " ")
                    throw UsageError(
                        message: "options come after the command name: rsakit \(named) \(rest)", command: nil)
                }
                guard let command = commands.first(where: { $0.spec.name == first }) else {
                    throw UsageError(
                        message: "unknown command '\(first)'" + didYouMean(first, commandNames)
                            + " (see 'rsakit --help')", command: nil)
                }
                let parsed = try ParsedArguments(Array(arguments.dropFirst()), spec: command.spec)
                if parsed.flag("help") {
                    try printOutput(command.spec.helpText)
                    return .success
                }
                try command.init(parsed).run()
                return .success
            }
        } catch {
            let failure = CLIFailure.from(error)
            var line = "rsakit: error: " + controlsEscaped(failure.message)
            if let usage = error as? UsageError, let name = usage.command {
                line += " (see 'rsakit \(name) --help')"
            }
            printError(line + "\n")
            return failure.status
        }
    }
}
