import FoundationEssentials
import Glibc

/// `sdfetch --generate-man` and `sdfetch --generate-completion SHELL`: print the man page or
/// a completion script made from the option tables. Used by `make install`; not in `--help`.
struct GenerateCommand: Command {
    enum Output: Sendable {
        case manPage
        case completion(Completions.Shell)
    }

    let output: Output

    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        switch output {
        case .manPage: FileDescriptorWriter.write(ManPage.render(), to: STDOUT_FILENO)
        case .completion(let shell): FileDescriptorWriter.write(Completions.render(shell), to: STDOUT_FILENO)
        }
        return .success
    }

    /// Parses the arguments after `--generate-completion`.
    static func completion(_ arguments: ArraySlice<String>) throws(UsageError) -> GenerateCommand {
        guard arguments.count == 1, let name = arguments.first else {
            throw UsageError("--generate-completion takes one SHELL: bash, zsh or fish")
        }
        return GenerateCommand(
            output: .completion(
                try ValueParsers.choice(name, option: "--generate-completion", of: Completions.Shell.self)))
    }
}
