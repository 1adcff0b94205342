import FoundationEssentials
import Glibc
import SDFetchCore

/// `sdfetch help [COMMAND]`, `sdfetch --help`, `sdfetch COMMAND --help`: text generated from the tables.
struct HelpCommand: Command {
    /// A command word, or nil for the general help.
    let topic: String?

    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        let command = CommandLineParser.commands.first { $0.name == topic }
        let text = command.map { HelpText.command($0) } ?? HelpText.general()
        FileDescriptorWriter.write(text, to: STDOUT_FILENO)
        return .success
    }
}

// MARK: - Text
