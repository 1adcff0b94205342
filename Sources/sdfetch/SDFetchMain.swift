import Foundation
import SDFetchCore

@main
struct SDFetchMain {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let status: ExitStatus
        do {
            let command = try CommandLineParser.parse(arguments)
            status = await command.run()
        } catch {
            StandardError.write("sdfetch: \(error.message)\n")
            StandardError.write("Try 'sdfetch --help' for more information.\n")
            status = .usage
        }
        exit(status.rawValue)
    }
}
