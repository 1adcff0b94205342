/// Walks argv against one command's option table (Foundation-free, no argument-parser).
///
/// Accepts `--opt value`, `--opt=value`, `-j 8`, `-j8`; `--` ends options; `-` alone is an
/// argument (stdin). Unknown options and bad values become a ``UsageError`` naming the option
/// and, when one is close, the valid spelling.
enum OptionScanner {
    /// What the scan found besides the filled command.
    enum Outcome: Equatable {
        case parsed
        /// `--help` or `-h` appeared; nothing else matters.
        case helpRequested
    }

    static func scan<C: ParsableCommand>(
        _ arguments: ArraySlice<String>, into command: inout C, environment: ProcessEnvironment
    ) throws(UsageError) -> Outcome {
        let table = C.allOptions
        var index = arguments.startIndex
        var optionsEnded = false
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                do throws(UsageError) {
                    try command.take(argument)
                } catch var error {
                    // `sdfetch failed bogus`: the hint points to the command's own help.
                    error.command = error.command ?? C.name
                    throw error
                }
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            let (spec, name, inline) = try lookup(argument, in: table)
            if spec.long == "help" { return .helpRequested }
            let value: String
            switch spec.arity {
            case .flag:
                if inline != nil { throw UsageError("option \(name) takes no value", command: C.name) }
                value = ""
            case .value(let valueName):
                if let inline {
                    value = inline
                } else if index < arguments.endIndex {
                    value = arguments[index]
                    index += 1
                } else {
                    throw UsageError("option \(name) needs a value \(valueName)", command: C.name)
                }
            }
            do {
                try spec.apply(&command, value, name)
            } catch var error as UsageError {
                error.command = error.command ?? C.name
                throw error
            } catch {
                preconditionFailure("option tables throw only UsageError, got \(error)")
            }
        }
        // `--help` anywhere wins over validation, but a bad earlier option is reported first.
        try command.validate(in: environment)
        return .parsed
    }

    /// Finds the row for `argument` and splits off an attached value.
    private static func lookup<C: ParsableCommand>(
        _ argument: String, in table: [OptionSpec<C>]
    ) throws(UsageError) -> (OptionSpec<C>, name: String, inline: String?) {
        if argument.hasPrefix("--") {
            let body = argument.dropFirst(2)
            let name: String
            var inline: String?
            if let equals = body.firstIndex(of: "=") {
                name = "--" + body[..<equals]
                inline = String(body[body.index(after: equals)...])
            } else {
                name = argument
            }
            if let spec = table.first(where: { "--" + $0.long == name }) { return (spec, name, inline) }
            let candidates = table.map { "--" + $0.long }
            throw UsageError(
                "unknown option \(Escaping.terminal(name))" + EditDistance.suggestion(for: name, among: candidates),
                command: C.name)
        }
        let letter = argument.dropFirst().first!
        let name = "-\(letter)"
        guard let spec = table.first(where: { $0.short == letter }) else {
            let shorts = table.compactMap { $0.short.map { "-\($0)" } }.joined(separator: " ")
            throw UsageError("unknown option \(Escaping.terminal(name)) (short options: \(shorts))", command: C.name)
        }
        let rest = argument.dropFirst(2)
        return (spec, name, rest.isEmpty ? nil : String(rest))
    }
}
