/// The bash completion script (`rsakit completion bash`): a `_rsakit` function registered with
/// `complete -F`. Store names come from `rsakit list --names KIND`, with the command line's
/// `--store` if one was typed.
enum BashCompletion {
    static func script(_ model: CompletionModel = CompletionModel()) -> String {
        let names = (model.commands.map(\.name) + ["help"]).joined(separator: " ")
        var text = """
        # bash completion for rsakit \(RSAKitCommandLine.version), from `rsakit completion bash`.
        # Install: rsakit completion bash > /usr/share/bash-completion/completions/rsakit
        # or, for this shell only: source <(rsakit completion bash)

        _rsakit_names() {
            local IFS=$'\\n'
            COMPREPLY=($(compgen -W "$(command rsakit list --names "$1" "${_rsakit_store[@]}" 2>/dev/null)" -- "$cur"))
        }

        _rsakit() {
            local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i
            local command=${COMP_WORDS[1]}
            _rsakit_store=()
            for ((i = 2; i < COMP_CWORD - 1; i++)); do
                if [[ ${COMP_WORDS[i]} == --store ]]; then _rsakit_store=(--store "${COMP_WORDS[i+1]}"); fi
            done
            if ((COMP_CWORD == 1)); then
                COMPREPLY=($(compgen -W "\(names)" -- "$cur"))
                return 0
            fi
            case "$command" in
            help)
                ((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W "\(names)" -- "$cur"))
                return 0 ;;

        """
        for command in model.commands {
            text += "    \(command.name))\n        case \"$prev\" in\n"
            for option in command.options where option.value != .none {
                let spelled = (["--\(option.name)"] + (option.short.map { ["-\($0)"] } ?? [])).joined(separator: "|")
                text += "        \(spelled)) \(action(option.value)); return 0 ;;\n"
            }
            text += "        esac\n"
            if !command.subcommands.isEmpty {
                text += "        if ((COMP_CWORD == 2)) && [[ $cur != -* ]]; then\n"
                text += "            COMPREPLY=($(compgen -W \"\(command.subcommands.joined(separator: " "))\" -- \"$cur\")); return 0\n        fi\n"
            }
            let options = command.options.map { "--\($0.name)" }.joined(separator: " ")
            if command.takesFiles {
                text += "        if [[ $cur != -* ]]; then COMPREPLY=($(compgen -f -- \"$cur\")); compopt -o filenames 2>/dev/null; return 0; fi\n"
            }
            text += "        COMPREPLY=($(compgen -W \"\(options)\" -- \"$cur\"))\n        return 0 ;;\n"
        }
        text += """
            esac
        }

        complete -F _rsakit rsakit

        """
        return text
    }

    private static func action(_ value: CompletionModel.Value) -> String {
        switch value {
        case .none, .text: return "COMPREPLY=()"
        case let .choices(values): return "COMPREPLY=($(compgen -W \"\(values.joined(separator: " "))\" -- \"$cur\"))"
        case .file: return "COMPREPLY=($(compgen -f -- \"$cur\")); compopt -o filenames 2>/dev/null"
        case .directory: return "COMPREPLY=($(compgen -d -- \"$cur\")); compopt -o filenames 2>/dev/null"
        case let .storeNames(kind): return "_rsakit_names \(kind)"
        }
    }
}
