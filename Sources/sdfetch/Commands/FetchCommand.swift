import AsyncAlgorithms
import Foundation
import SDFetchCore

/// `sdfetch [fetch]`: the main job.
struct FetchCommand: Command {
    var sources: [InputSource] = []
    var cacheDirectory: String?
    var options = FetchOptions()

    func run() async -> ExitStatus {
        let directory = cacheDirectory ?? CacheLocation.defaultDirectory()
        let cache: DiskCache
        do {
            cache = try DiskCache(directory: directory)
        } catch {
            StandardError.write("sdfetch: \(error)\n")
            return .unusableCacheOrInput
        }
        let inputs = sources.isEmpty ? [InputSource.standardInput] : sources
        let fetcher = Fetcher(options: options, cache: cache)
        let run = FetchRun(fetcher: fetcher, sources: inputs)
        let reader = URLListReader(sources: inputs)
        let events = AsyncChannel<FetchEvent>()
        Task { await run.run(reader: reader, into: events) }

        var summary = RunSummary()
        for await event in events {
            switch event {
            case .result(let result):
                ResultPrinter.printLine(result)
            case .unreadableInput(let source, let detail):
                StandardError.write("sdfetch: cannot read \(source): \(detail)\n")
            case .finished(let final):
                summary = final
            }
        }
        fetcher.shutdown()
        if summary.unreadableInputs > 0 { return .unusableCacheOrInput }
        let failures = summary.count(.failed) + summary.count(.skipped) + summary.count(.invalid)
        return failures > 0 ? .someFailed : .success
    }
}

/// Where the cache lives when `--cache-dir` is not given (SPEC "Environment").
enum CacheLocation {
    static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit = environment["SDFETCH_CACHE_DIR"], !explicit.isEmpty { return explicit }
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/sdfetch" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.cache/sdfetch"
    }
}
