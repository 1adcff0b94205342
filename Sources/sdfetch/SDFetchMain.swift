import FoundationEssentials
import Glibc

/// The entry point: parse, run, exit. The only place that calls `exit`.
@main
struct SDFetchMain {
    static func main() async {
        // A closed stdout pipe (`sdfetch urls | head`) must end writes with EPIPE, not kill the run.
        signal(SIGPIPE, SIG_IGN)
        let environment = ProcessEnvironment.current
        let status: ExitStatus
        do throws(UsageError) {
            let command = try CommandLineParser.parse(Array(CommandLine.arguments.dropFirst()), environment: environment)
            status = await command.run(in: environment)
        } catch {
            StandardError.write("sdfetch: \(error.message)\n\(error.hint)\n")
            status = ExitStatus(error)
        }
        exit(status.rawValue)
    }
}
