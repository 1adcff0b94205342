import SDFetchCore

// The examples of SDFetchCore.docc/GettingStarted.md, compiled and run by
// `GettingStartedTests`, which also checks that the article shows them as they are here:
// each example runs from its `// example: NAME` line to its `// end example` line.

// example: fetch-one
/// Fetches one URL through the cache at `cacheDirectory`: a second call is answered by the cache.
func fetchOne(_ url: String, cacheDirectory: String) async throws -> FetchResult {
    let cache = try DiskCache(directory: cacheDirectory)
    return await withFetcher(options: FetchOptions(), cache: cache) { fetcher in
        // The text is parsed, looked up, fetched and verified; a bad URL is an `invalid` result.
        await fetcher.fetch(url)
    }
}
// end example

// example: fetch-list
/// Fetches a list held in memory: each unique URL once, at most 32 at a time, handing each
/// result line and the progress after each batch to `report` (the library never prints);
/// then keeps the cache under its cap.
func fetchList(
    _ urls: [String], cacheDirectory: String, report: @escaping @Sendable (String) -> Void
) async throws -> RunSummary {
    let cache = try DiskCache(directory: cacheDirectory)
    var options = FetchOptions()
    options.concurrency = 32
    options.maxCacheSize = 1 << 30  // 1 GiB
    return try await withFetcher(options: options, cache: cache) { fetcher throws(CacheError) in
        let run = FetchRun(fetcher: fetcher, sources: [.list(name: "my-list", urls)])
        var summary = RunSummary()
        await run.run { event in
            switch event {
            case .results(let results):
                for result in results {
                    report("\(result.status) \(result.url) \(result.path ?? result.failure?.detail ?? "")")
                }
                let progress = run.progress.snapshot
                report("\(progress.done)/\(progress.total) done, \(progress.bytes) bytes received")
            case .finished(let totals):
                summary = totals
            default:
                break
            }
        }
        // The run's own entries go last when the cache is over its cap.
        try await fetcher.keepCacheCap(after: summary)
        return summary
    }
}
// end example

// example: fetch-stream
/// Fetches URLs as another task produces them (a crawler, a queue): the run starts on the
/// first and waits for the next while the producer is slow.
func fetchStream(_ urls: AsyncStream<String>, cacheDirectory: String) async throws -> [FetchResult] {
    let cache = try DiskCache(directory: cacheDirectory)
    return await withFetcher(options: FetchOptions(), cache: cache) { fetcher in
        let run = FetchRun(fetcher: fetcher, sources: [])
        var done: [FetchResult] = []
        await run.run(reader: URLListReader(urls: urls, name: "stream")) { event in
            if case .results(let results) = event { done += results }
        }
        return done
    }
}
// end example

// example: clean
/// Removes entries stored more than a day ago, then the least recently used ones past
/// 100 MiB, as `sdfetch clean --max-age 1d --max-size 100M` does.
func cleanCache(_ cacheDirectory: String) throws -> CleanReport {
    let cache = try DiskCache(directory: cacheDirectory)
    return try cache.clean(maxAge: .seconds(24 * 3600), maxSize: 100 << 20, dryRun: false)
}
// end example
