internal import CSDFetchShims
import FoundationEssentials
import Glibc

/// The entry point: parse, run, exit. The only place that calls `exit`.
@main
struct SDFetchMain {
    static func main() async {
        // Two malloc arenas, not glibc's eight per core: the bucket workers and the network
        // thread each left an arena of freed memory behind, a third of a large run's peak
        // (1,000,000 URLs: 131 MB with the default, 116 with two, at no cost in CPU).
        _ = CSDFetch_limit_malloc_arenas(2)
        // A closed stdout pipe (`sdfetch urls | head`) must end writes with EPIPE, not kill the run.
        signal(SIGPIPE, SIG_IGN)
        let environment = ProcessEnvironment.current
        let status: ExitStatus
        do throws(UsageError) {
            let command = try CommandLineParser.parse(
                Array(CommandLine.arguments.dropFirst()), environment: environment)
            status = await command.run(in: environment)
        } catch {
            StandardError.write("sdfetch: \(error.message)\n\(error.hint)\n")
            status = ExitStatus(error)
        }
        exit(status.rawValue)
    }
}
