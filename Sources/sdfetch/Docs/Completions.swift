/// Shell completion scripts for bash, zsh and fish, generated from the option tables.
enum Completions {
    enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    static func render(_ shell: Shell) -> String {
        switch shell {
        case .bash: bash()
        case .zsh: zsh()
        case .fish: fish()
        }
    }

    /// One command's option words, the options whose value is a file or directory or one of
    /// a few words, and the words its first argument may be.
    private struct Table {
        let name: String
        let words: [String]
        let pathOptions: [String]
        let valueOptions: [String]
        /// Each option spelling (`--verify`, and `-x` when it has one) with its values.
        let choiceOptions: [(spelling: String, values: [String])]
        let argumentWords: [String]
        let rows: [(long: String, short: Character?, help: String, value: String?, choices: [String])]
    }

    private static func table<C: ParsableCommand>(_ command: C.Type) -> Table {
        let rows = C.allOptions.map { row -> (String, Character?, String, String?, [String]) in
            if case .value(let name) = row.arity { return (row.long, row.short, row.help, name, row.choices) }
            return (row.long, row.short, row.help, nil, [])
        }
        func spellings(_ row: (String, Character?, String, String?, [String])) -> [String] {
            ["--" + row.0] + (row.1.map { ["-\($0)"] } ?? [])
        }
        let valued = rows.filter { $0.3 != nil }
        let paths = valued.filter { ["FILE", "DIR"].contains($0.3!) }
        return Table(
            name: C.name, words: rows.flatMap(spellings),
            pathOptions: paths.flatMap(spellings),
            valueOptions: valued.flatMap(spellings),
            choiceOptions: valued.filter { !$0.4.isEmpty }.flatMap { row in spellings(row).map { ($0, row.4) } },
            argumentWords: C.argumentWords,
            rows: rows.map { (long: $0.0, short: $0.1, help: $0.2, value: $0.3, choices: $0.4) })
    }

    private static var tables: [Table] {
        CommandLineParser.commands.map { table($0) }
    }

    // MARK: - bash

    private static func bash() -> String {
        var cases = ""
        var choices = ""
        for table in tables {
            cases += """
                        \(table.name))
                            options="\(table.words.joined(separator: " "))"
                            paths="\(table.pathOptions.joined(separator: " "))"
                            values="\(table.valueOptions.joined(separator: " "))"
                            words="\(table.argumentWords.joined(separator: " "))" ;;

                """
            for (spelling, values) in table.choiceOptions {
                choices += """
                            "\(table.name) \(spelling)") COMPREPLY=( $(compgen -W "\(values.joined(separator: " "))" -- "$cur") ); return ;;

                    """
            }
        }
        let commands = CommandLineParser.commandWords.filter { $0 != FetchCommand.name }
        return """
            # bash completion for sdfetch (generated from its option tables)
            _sdfetch() {
                local cur prev command options paths values words
                cur="${COMP_WORDS[COMP_CWORD]}"
                prev="${COMP_WORDS[COMP_CWORD-1]}"
                command=fetch
                case " \(commands.joined(separator: " ")) " in
                    *" ${COMP_WORDS[1]} "*) [ "$COMP_CWORD" -gt 1 ] && command="${COMP_WORDS[1]}" ;;
                esac
                case "$command" in
            \(cases)        *) options=""; paths=""; values=""; words="" ;;
                esac
                case "$command $prev" in
            \(choices)    esac
                if [[ " $paths " == *" $prev "* ]]; then
                    COMPREPLY=( $(compgen -f -- "$cur") )
                    return
                fi
                if [[ " $values " == *" $prev "* ]]; then
                    COMPREPLY=()
                    return
                fi
                if [[ "$cur" == -* ]]; then
                    COMPREPLY=( $(compgen -W "$options" -- "$cur") )
                elif [ "$COMP_CWORD" -eq 1 ]; then
                    COMPREPLY=( $(compgen -W "fetch \(commands.joined(separator: " "))" -- "$cur") $(compgen -f -- "$cur") )
                elif [ -n "$words" ]; then
                    # A command whose first argument is one of a few words (`failed list`); URLs after it.
                    if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=( $(compgen -W "$words" -- "$cur") ); else COMPREPLY=(); fi
                else
                    COMPREPLY=( $(compgen -f -- "$cur") )
                fi
            }
            complete -o filenames -F _sdfetch sdfetch

            """
    }

    // MARK: - zsh

    private static func zsh() -> String {
        var script = "#compdef sdfetch\n# zsh completion for sdfetch (generated from its option tables)\n\n"
        script += "_sdfetch() {\n  local -a commands\n  commands=(\n"
        for command in CommandLineParser.commands {
            script += "    '\(command.name):\(quoteSingle(command.summary))'\n"
        }
        script += "    'help:show help for a command'\n  )\n"
        script +=
            "  local command=fetch\n  if (( CURRENT > 2 )) && (( ${commands[(I)${words[2]}:*]} )); then command=${words[2]}; fi\n"
        script += "  case $command in\n"
        for table in tables {
            script += "    \(table.name))\n      _arguments -s \\\n"
            for row in table.rows {
                let help = quoteSingle(row.help).replacing("[", with: "\\[").replacing("]", with: "\\]")
                let action =
                    row.value.map { value in
                        if !row.choices.isEmpty {
                            return ":\(value.lowercased()):(\(row.choices.joined(separator: " ")))"
                        }
                        return ["FILE", "DIR"].contains(value)
                            ? ":\(value.lowercased()):_files" : ":\(value.lowercased()):"
                    } ?? ""
                if let short = row.short {
                    script += "        '(-\(short) --\(row.long))'{-\(short),--\(row.long)}'[\(help)]\(action)' \\\n"
                } else {
                    script += "        '--\(row.long)[\(help)]\(action)' \\\n"
                }
            }
            if table.name == FetchCommand.name {
                script += "        '1: :{_describe command commands; _files}' '*:file:_files'\n      ;;\n"
            } else if !table.argumentWords.isEmpty {
                script += "        '1:action:(\(table.argumentWords.joined(separator: " ")))' '*:url:'\n      ;;\n"
            } else {
                script += "        '*:argument:_files'\n      ;;\n"
            }
        }
        script += "  esac\n}\n\n_sdfetch \"$@\"\n"
        return script
    }

    // MARK: - fish

    private static func fish() -> String {
        var script = "# fish completion for sdfetch (generated from its option tables)\n"
        let names = CommandLineParser.commands.map { $0.name }.filter { $0 != FetchCommand.name } + ["help"]
        let noCommand = "not __fish_seen_subcommand_from \(names.joined(separator: " "))"
        for command in CommandLineParser.commands where command.name != FetchCommand.name {
            script += "complete -c sdfetch -n '\(noCommand)' -a \(command.name) -d '\(quoteSingle(command.summary))'\n"
        }
        for table in tables {
            let condition = table.name == FetchCommand.name ? noCommand : "__fish_seen_subcommand_from \(table.name)"
            for row in table.rows {
                var line = "complete -c sdfetch -n '\(condition)' -l \(row.long)"
                if let short = row.short { line += " -s \(short)" }
                if let value = row.value {
                    if !row.choices.isEmpty {
                        line += " -r -f -a '\(row.choices.joined(separator: " "))'"
                    } else {
                        line += ["FILE", "DIR"].contains(value) ? " -r -F" : " -r"
                    }
                }
                line += " -d '\(quoteSingle(row.help))'\n"
                script += line
            }
            if !table.argumentWords.isEmpty {
                script +=
                    "complete -c sdfetch -n '\(condition)' -f -a '\(table.argumentWords.joined(separator: " "))'\n"
            }
        }
        return script
    }

    /// Text inside single quotes in any of the three shells.
    private static func quoteSingle(_ text: String) -> String {
        text.replacing("'", with: "'\\''")
    }
}
