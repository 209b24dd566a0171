/// `rsakit completion bash|zsh|fish`: print the shell completion script, generated from the
/// same command specs as the help (so it cannot drift from the options).
struct CompletionCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "completion",
        overview: "Print the completion script for bash, zsh or fish.",
        usage: "rsakit completion bash|zsh|fish",
        options: [],
        positionals: ["SHELL"],
        subcommands: ["bash", "zsh", "fish"],
        discussion: """
            Tags, labels, services, accounts and servers are completed from the current store
            (--store on the line, else $RSAKIT_STORE, else the default) through a quick listing
            that never asks for a passphrase and never creates a store.

              source <(rsakit completion bash)                    # this bash session
              rsakit completion bash > /usr/share/bash-completion/completions/rsakit
              rsakit completion zsh > "${fpath[1]}/_rsakit"
              rsakit completion fish > ~/.config/fish/completions/rsakit.fish
            """,
        passphrases: .none)

    let shell: String
    init(_ arguments: ParsedArguments) throws {
        shell = try parseSubcommand(arguments, spec: Self.spec)
    }

    func run() throws {
        switch shell {
        case "bash": try printOutput(BashCompletion.script())
        case "zsh": try printOutput(ZshCompletion.script())
        default: try printOutput(FishCompletion.script())
        }
    }
}
