/// Turns argv into a ``Command`` (Foundation only, no argument-parser package).
///
/// The command word counts in first place (sdfetch(1) SYNOPSIS), or after the options every
/// command shares when no file of that name exists (``LeadingOptions``); anything else there
/// is a fetch option or FILE, so a file named `clean` stays reachable as `./clean` or
/// `sdfetch fetch clean`.
enum CommandLineParser {
    /// Every command with an option table, in help order.
    static var commands: [any ParsableCommand.Type] {
        [
            FetchCommand.self, CleanCommand.self, StatsCommand.self, PathCommand.self, FailedCommand.self,
            VerifyCommand.self, MergeCommand.self,
        ]
    }

    /// Words recognised in first place, for dispatch and "did you mean".
    static var commandWords: [String] { commands.map { $0.name } + ["help"] }

    static func parse(_ arguments: [String], environment: ProcessEnvironment) throws(UsageError) -> any Command {
        let arguments = try LeadingOptions.commandWordFirst(arguments, environment: environment)
        let rest = arguments.dropFirst()
        switch arguments.first {
        case "--version":
            return VersionCommand()
        case "--generate-man":
            return GenerateCommand(output: .manPage)
        case "--generate-completion":
            return try GenerateCommand.completion(rest)
        case "--help", "-h":
            return HelpCommand(topic: nil)
        case "help":
            guard let topic = rest.first else { return HelpCommand(topic: nil) }
            guard rest.count == 1 else { throw UsageError("help takes at most one COMMAND") }
            guard let command = commands.first(where: { $0.name == topic }) else {
                throw UsageError(
                    "unknown command '\(Escaping.terminal(topic))'"
                        + EditDistance.suggestion(for: topic, among: commandWords))
            }
            return HelpCommand(topic: command.name)
        case let word? where word != FetchCommand.name:
            if let command = commands.first(where: { $0.name == word }) {
                return try parse(command, rest, environment: environment)
            }
            return try parse(FetchCommand.self, arguments[...], environment: environment)
        default:
            return try parse(FetchCommand.self, rest, environment: environment)
        }
    }

    private static func parse<C: ParsableCommand>(
        _ type: C.Type, _ arguments: ArraySlice<String>, environment: ProcessEnvironment
    ) throws(UsageError) -> any Command {
        var command = C()
        // The config file first, so every option given on the command line overrides it.
        try ConfigFile.load(for: arguments, environment: environment)?.apply(to: &command)
        switch try OptionScanner.scan(arguments, into: &command, environment: environment) {
        case .parsed: return command
        case .helpRequested: return HelpCommand(topic: C.name)
        }
    }
}
