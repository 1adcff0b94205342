import AsyncAlgorithms
import SDFetchCore

/// Runs a ``FetchRun`` to the end and gathers what it reported.
public struct CollectedRun: Sendable {
    public var results: [FetchResult] = []
    public var unreadable: [String] = []
    public var summary = RunSummary()
    /// Final further occurrences per duplicated key (``FetchEvent/inputFinished(duplicates:)``).
    public var duplicates: [KeyDigest: Int] = [:]

    /// Runs `run` over `sources` and waits for `finished`.
    public static func collect(_ run: FetchRun) async -> CollectedRun {
        let events = AsyncChannel<FetchEvent>()
        let reader = URLListReader(sources: run.sources)
        async let done: Void = run.run(reader: reader, into: events)
        var collected = CollectedRun()
        for await event in events {
            switch event {
            case .results(let results): collected.results += results
            case .unreadableInput(let source, _): collected.unreadable.append(source)
            case .inputFinished(let duplicates): collected.duplicates = duplicates
            case .finished(let summary): collected.summary = summary
            }
        }
        await done
        return collected
    }

    /// The result whose reported URL is `url`.
    public func result(for url: String) -> FetchResult? { results.first { $0.url == url } }
}
