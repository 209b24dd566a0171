/// The bash completion script (`rsakit completion bash`): a `_rsakit` function registered with
/// `complete -F`. Store names come from `rsakit list --names KIND`, with the command line's
/// `--store` if one was typed.
///
/// Store names are data chosen by whoever made a key file, certificate or PKCS#12 file the user
/// imported, so the script never lets the shell expand one (`compgen -W` would: it expands its
/// word list, command substitution included). See ``nameFunctions``.
enum BashCompletion {
    /// The functions that complete store names: names are read line by line into an array
    /// (`mapfile`), compared with the typed prefix as plain strings, and inserted quoted:
    /// `printf %q`, or, when the user opened a quote, in that quote's style (readline then
    /// replaces only what follows the quote, and closes it unless the text ends with that
    /// quote character, when the function closes it). The typed prefix is unquoted by
    /// `_rsakit_dequote`, which removes quotes and backslashes as the shell would and runs nothing.
    static let nameFunctions = #"""
        # _rsakit_dequote WORD: the text WORD stands for on a command line, found without running
        # anything. Sets _rsakit_text; _rsakit_open, the quote still open at the end ('' if none);
        # and _rsakit_open_at, the length of _rsakit_text when that quote opened.
        _rsakit_dequote() {
            local word=$1 c i
            _rsakit_text='' _rsakit_open='' _rsakit_open_at=0
            for ((i = 0; i < ${#word}; i++)); do
                c=${word:i:1}
                if [[ $_rsakit_open == "'" ]]; then
                    if [[ $c == "'" ]]; then _rsakit_open=''; else _rsakit_text+=$c; fi
                elif [[ $_rsakit_open == '"' ]]; then
                    if [[ $c == '"' ]]; then
                        _rsakit_open=''
                    elif [[ $c == '\' && ${word:i+1:1} == [\\\"\$\`] ]]; then
                        _rsakit_text+=${word:i+1:1}; ((++i))
                    else
                        _rsakit_text+=$c
                    fi
                elif [[ $c == "'" || $c == '"' ]]; then
                    _rsakit_open=$c _rsakit_open_at=${#_rsakit_text}
                elif [[ $c == '\' ]]; then
                    _rsakit_text+=${word:i+1:1}; ((++i))
                else
                    _rsakit_text+=$c
                fi
            done
        }

        # _rsakit_names KIND: the store's names of KIND that start with $cur, quoted for insertion.
        _rsakit_names() {
            local -a names
            local name rest quoted
            mapfile -t names < <(command rsakit list --names "$1" "${_rsakit_store[@]}" 2>/dev/null)
            _rsakit_dequote "$cur"
            COMPREPLY=()
            for name in "${names[@]}"; do
                [[ -n $name && $name == "$_rsakit_text"* ]] || continue
                rest=${name:_rsakit_open_at}
                case $_rsakit_open in
                "'") quoted=${rest//"'"/"'\''"} ;;
                '"') quoted=${rest//\\/\\\\} quoted=${quoted//\"/\\\"}
                    quoted=${quoted//\$/\\\$} quoted=${quoted//\`/\\\`} ;;
                *) printf -v quoted %q "$name" ;;
                esac
                # Readline adds no closing quote after text that ends with one: add it here.
                [[ -n $_rsakit_open && $quoted == *"$_rsakit_open" ]] && quoted+=$_rsakit_open
                COMPREPLY+=("$quoted")
            done
        }

        """#

    static func script(_ model: CompletionModel = CompletionModel()) -> String {
        let names = (model.commands.map(\.name) + ["help"]).joined(separator: " ")
        var text = """
            # bash completion for rsakit \(RSAKitCommandLine.version), from `rsakit completion bash`.
            # Install: rsakit completion bash > /usr/share/bash-completion/completions/rsakit
            # or, for this shell only: source <(rsakit completion bash)

            """
        text +=
            nameFunctions + """

                _rsakit() {
                    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i
                    local command=${COMP_WORDS[1]}
                    _rsakit_store=()
                    for ((i = 2; i < COMP_CWORD - 1; i++)); do
                        if [[ ${COMP_WORDS[i]} == --store ]]; then
                            _rsakit_dequote "${COMP_WORDS[i+1]}"
                            [[ $_rsakit_text == "~/"* ]] && _rsakit_text=$HOME/${_rsakit_text#"~/"}
                            _rsakit_store=(--store "$_rsakit_text")
                        fi
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
                text +=
                    "            COMPREPLY=($(compgen -W \"\(command.subcommands.joined(separator: " "))\" -- "
                    + "\"$cur\")); return 0\n        fi\n"
            }
            let options = command.options.map { "--\($0.name)" }.joined(separator: " ")
            if command.takesFiles {
                text +=
                    "        if [[ $cur != -* ]]; then COMPREPLY=($(compgen -f -- \"$cur\")); compopt -o filenames "
                    + "2>/dev/null; return 0; fi\n"
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
