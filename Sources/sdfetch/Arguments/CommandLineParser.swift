import Foundation
import SDFetchCore

/// A parsed command, ready to run.
protocol Command: Sendable {
    func run() async -> ExitStatus
}

/// Turns argv into a ``Command`` (Foundation only, no argument-parser package).
enum CommandLineParser {
    static func parse(_ arguments: [String]) throws(UsageError) -> any Command {
        var fetch = FetchCommand()
        var index = 0
        var onlyFiles = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyFiles || argument == "-" || !argument.hasPrefix("-") {
                fetch.sources.append(argument == "-" ? .standardInput : .file(argument))
                continue
            }
            if argument == "--" {
                onlyFiles = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            } else if !argument.hasPrefix("--"), argument.count > 2 {
                name = String(argument.prefix(2))
                inlineValue = String(argument.dropFirst(2))
            }
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard index < arguments.count else { throw UsageError("option \(name) needs a value") }
                index += 1
                return arguments[index - 1]
            }
            switch name {
            case "--cache-dir":
                fetch.cacheDirectory = try value()
            case "-j", "--concurrency":
                let text = try value()
                guard let count = Int(text), (1...1024).contains(count) else {
                    throw UsageError("option \(name): '\(text)' is not a number from 1 to 1024")
                }
                fetch.options.concurrency = count
            default:
                throw UsageError("unknown option \(name)")
            }
        }
        return fetch
    }
}
