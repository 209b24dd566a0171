/// The zsh completion script (`rsakit completion zsh`): a `#compdef rsakit` function using
/// `_arguments`, for a folder on `$fpath` (file name `_rsakit`). Store names are data and are
/// never expanded: they reach `compadd` as array elements, and compadd quotes what it inserts.
enum ZshCompletion {
    static func script(_ model: CompletionModel = CompletionModel()) -> String {
        var text = """
            #compdef rsakit
            # zsh completion for rsakit \(RSAKitCommandLine.version), from `rsakit completion zsh`.
            # Install: rsakit completion zsh > "${fpath[1]}/_rsakit" (then restart zsh)

            # _rsakit_names [compadd options] KIND: the store's names of KIND (_arguments puts its
            # compadd options first). Each line of `rsakit list --names` is one name, taken as data:
            # (f) splits on newlines and nothing expands the pieces; compadd quotes each name it
            # inserts.
            _rsakit_names() {
                local kind=$argv[-1]
                local -a names store
                local i=${words[(I)--store]}
                argv[-1]=()
                (( i > 0 )) && store=(--store ${${(Q)words[i+1]}/#\\~/$HOME})
                names=(${(f)"$(command rsakit list --names $kind $store 2>/dev/null)"})
                compadd "$@" -a names
            }

            _rsakit() {
                local -a commands
                commands=(

            """
        for command in model.commands {
            text +=
                "        "
                + "\(singleQuoted("\(command.name):\(bracketSafe(CompletionModel.firstSentence(command.overview)))"))\n"
        }
        text += """
                    'help:Show help for a command'
                )
                if (( CURRENT == 2 )); then
                    _describe -t commands 'rsakit command' commands
                    return
                fi
                local command=${words[2]}
                shift words
                (( CURRENT-- ))
                case $command in
                help) _describe -t commands 'rsakit command' commands ;;

            """
        for command in model.commands {
            var specs: [String] = []
            for option in command.options {
                let names = option.short.map { "{-\($0),--\(option.name)}" } ?? "--\(option.name)"
                let description = "[\(bracketSafe(option.help))]"
                let action: String
                switch option.value {
                case .none: action = ""
                case .text: action = ":\(option.name): "
                case let .choices(values): action = ":\(option.name):(\(values.joined(separator: " ")))"
                case .file: action = ":file:_files"
                case .directory: action = ":folder:_files -/"
                case let .storeNames(kind): action = ":\(option.name):_rsakit_names \(kind)"
                }
                // A brace form must stay outside the quotes for zsh to expand it.
                if option.short != nil {
                    specs.append(names + singleQuoted(description + action))
                } else {
                    specs.append(singleQuoted(names + description + action))
                }
            }
            if !command.subcommands.isEmpty {
                specs.append(singleQuoted("1:subcommand:(\(command.subcommands.joined(separator: " ")))"))
            }
            if command.takesFiles { specs.append("'*:file:_files'") }
            text += "    \(command.name))\n        _arguments -s \\\n"
            text += specs.map { "            \($0)" }.joined(separator: " \\\n") + " ;;\n"
        }
        text += """
                esac
            }

            _rsakit "$@"

            """
        return text
    }

    /// Text for inside `[...]` of an _arguments spec: brackets and colons would end it.
    private static func bracketSafe(_ text: String) -> String {
        text.replacing("[", with: "(").replacing("]", with: ")").replacing(":", with: " -")
    }
}
