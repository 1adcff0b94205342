import SDFetchCore

/// Runs a ``FetchRun`` to the end and gathers what it reported.
public struct CollectedRun: Sendable {
    public var results: [FetchResult] = []
    public var unreadable: [String] = []
    public var summary = RunSummary()
    /// Final further occurrences per duplicated key (``FetchEvent/inputFinished(duplicates:)``).
    public var duplicates: [KeyDigest: Int] = [:]

    /// Runs `run` over its sources (read by `reader`, by default a new one) and waits for `finished`.
    public static func collect(_ run: FetchRun, reader: URLListReader? = nil) async -> CollectedRun {
        let reader = reader ?? URLListReader(sources: run.sources)
        var collected = CollectedRun()
        await run.run(reader: reader) { event in
            switch event {
            case .results(let results): collected.results += results
            case .unreadableInput(let source, _): collected.unreadable.append(source)
            case .inputFinished(let duplicates): collected.duplicates = duplicates
            case .finished(let summary): collected.summary = summary
            }
        }
        return collected
    }

    /// The result whose reported URL is `url`.
    public func result(for url: String) -> FetchResult? { results.first { $0.url == url } }
}
