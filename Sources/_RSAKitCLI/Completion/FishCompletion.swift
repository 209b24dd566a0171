/// The fish completion script (`rsakit completion fish`): `complete -c rsakit` lines, each
/// command's options offered once that command is on the line. Store names are data: fish
/// takes each output line of `__rsakit_names` as one candidate without expanding it.
enum FishCompletion {
    static func script(_ model: CompletionModel = CompletionModel()) -> String {
        var lines = [
            "# fish completion for rsakit \(RSAKitCommandLine.version), from `rsakit completion fish`.",
            "# Install: rsakit completion fish > ~/.config/fish/completions/rsakit.fish",
            "complete -c rsakit -f",
            // One name per line, never expanded (fish escapes a candidate when it inserts
            // it). A tab would end the candidate and start its description, so a name
            // holding one is left out.
            "function __rsakit_names",
            "    set -l store (string replace -r -- '.*--store[ =](\\S+).*' '$1' (commandline -p))",
            "    if test \"$store\" != (commandline -p)",
            "        command rsakit list --names $argv[1] --store $store 2>/dev/null | string match -rv -- '\\t'",
            "    else",
            "        command rsakit list --names $argv[1] 2>/dev/null | string match -rv -- '\\t'",
            "    end",
            "end"
        ]
        let all = model.commands.map(\.name) + ["help"]
        for command in model.commands {
            lines.append(
                "complete -c rsakit -n __fish_use_subcommand -a \(command.name) -d "
                    + "\(singleQuoted(CompletionModel.firstSentence(command.overview)))"
            )
        }
        lines.append("complete -c rsakit -n __fish_use_subcommand -a help -d 'Show help for a command'")
        lines.append(
            "complete -c rsakit -n '__fish_seen_subcommand_from help' -a \(singleQuoted(all.joined(separator: " ")))")
        for command in model.commands {
            let when = "__fish_seen_subcommand_from \(command.name)"
            if !command.subcommands.isEmpty {
                let subs = command.subcommands.joined(separator: " ")
                lines.append(
                    "complete -c rsakit -n \(singleQuoted("\(when); and not __fish_seen_subcommand_from \(subs)")) "
                        + "-a \(singleQuoted(subs))"
                )
            }
            if command.takesFiles {
                lines.append("complete -c rsakit -n \(singleQuoted(when)) -F")
            }
            for option in command.options {
                var line = "complete -c rsakit -n \(singleQuoted(when)) -l \(option.name)"
                if let short = option.short { line += " -s \(short)" }
                switch option.value {
                case .none: break
                case .text: line += " -x"
                case let .choices(values): line += " -x -a \(singleQuoted(values.joined(separator: " ")))"
                case .file: line += " -r -F"
                case .directory: line += " -x -a '(__fish_complete_directories)'"
                case let .storeNames(kind): line += " -x -a '(__rsakit_names \(kind))'"
                }
                line += " -d \(singleQuoted(option.help))"
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
