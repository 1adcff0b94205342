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

    /// One command's option words and the options whose value is a file or directory.
    private struct Table {
        let name: String
        let words: [String]
        let pathOptions: [String]
        let valueOptions: [String]
        let rows: [(long: String, short: Character?, help: String, value: String?)]
    }

    private static func table<C: ParsableCommand>(_ command: C.Type) -> Table {
        let rows = C.allOptions.map { row -> (String, Character?, String, String?) in
            if case .value(let name) = row.arity { return (row.long, row.short, row.help, name) }
            return (row.long, row.short, row.help, nil)
        }
        let words = rows.flatMap { row in ["--" + row.0] + (row.1.map { ["-\($0)"] } ?? []) }
        let valued = rows.filter { $0.3 != nil }
        let paths = valued.filter { ["FILE", "DIR"].contains($0.3!) }
        return Table(
            name: C.name, words: words,
            pathOptions: paths.flatMap { ["--" + $0.0] + ($0.1.map { ["-\($0)"] } ?? []) },
            valueOptions: valued.flatMap { ["--" + $0.0] + ($0.1.map { ["-\($0)"] } ?? []) },
            rows: rows.map { (long: $0.0, short: $0.1, help: $0.2, value: $0.3) })
    }

    private static var tables: [Table] {
        CommandLineParser.commands.map { table($0) }
    }

    // MARK: - bash

    private static func bash() -> String {
        var cases = ""
        for table in tables {
            cases += """
                        \(table.name))
                            options="\(table.words.joined(separator: " "))"
                            paths="\(table.pathOptions.joined(separator: " "))"
                            values="\(table.valueOptions.joined(separator: " "))" ;;

                """
        }
        let commands = CommandLineParser.commandWords.filter { $0 != FetchCommand.name }
        return """
            # bash completion for sdfetch (generated from its option tables)
            _sdfetch() {
                local cur prev command options paths values
                cur="${COMP_WORDS[COMP_CWORD]}"
                prev="${COMP_WORDS[COMP_CWORD-1]}"
                command=fetch
                case " \(commands.joined(separator: " ")) " in
                    *" ${COMP_WORDS[1]} "*) [ "$COMP_CWORD" -gt 1 ] && command="${COMP_WORDS[1]}" ;;
                esac
                case "$command" in
            \(cases)        *) options=""; paths=""; values="" ;;
                esac
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
                let help = quoteSingle(row.help).replacingOccurrences(of: "[", with: "\\[").replacingOccurrences(
                    of: "]", with: "\\]")
                let action =
                    row.value.map {
                        ["FILE", "DIR"].contains($0) ? ":\($0.lowercased()):_files" : ":\($0.lowercased()):"
                    } ?? ""
                if let short = row.short {
                    script += "        '(-\(short) --\(row.long))'{-\(short),--\(row.long)}'[\(help)]\(action)' \\\n"
                } else {
                    script += "        '--\(row.long)[\(help)]\(action)' \\\n"
                }
            }
            script +=
                table.name == FetchCommand.name
                ? "        '1: :{_describe command commands; _files}' '*:file:_files'\n      ;;\n"
                : "        '*:argument:_files'\n      ;;\n"
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
                if let value = row.value { line += ["FILE", "DIR"].contains(value) ? " -r -F" : " -r" }
                line += " -d '\(quoteSingle(row.help))'\n"
                script += line
            }
        }
        return script
    }

    /// Text inside single quotes in any of the three shells.
    private static func quoteSingle(_ text: String) -> String {
        text.replacingOccurrences(of: "'", with: "'\\''")
    }
}
