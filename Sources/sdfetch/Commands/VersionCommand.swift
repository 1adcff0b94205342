import FoundationEssentials
import Glibc
import SDFetchCore

/// `sdfetch --version`.
struct VersionCommand: Command {
    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        // Like `curl -V`: the program, then each library it runs on.
        let libraries = LibraryVersions.all.map { "\($0.name)/\($0.version)" }.joined(separator: " ")
        FileDescriptorWriter.write("sdfetch \(SDFetchVersion.string)\n\(libraries)\n", to: STDOUT_FILENO)
        return .success
    }
}
