/// The calls a program using SDFetchCore starts with (<doc:GettingStarted>): one URL
/// from its text, and the cache cap kept after a run.
extension Fetcher {
    /// The result for the URL `text` (trimmed): parsed, looked up in the cache, fetched
    /// when the cache does not answer, and reported under the spelling given. A text that
    /// is no usable URL gives an `invalid` result, as a list's line would; nothing throws.
    ///
    /// One key fetched from many tasks at once is fetched once each: give such lists to a
    /// ``FetchRun``, which coalesces them.
    public func fetch(_ text: String) async -> FetchResult {
        guard case .line(let line) = LineSplitter.line(text, source: "-", number: 1) else {
            return Self.invalid(text, reason: "empty URL")
        }
        do throws(InvalidURL) {
            guard !line.isOverlong else { throw InvalidURL(reason: "longer than \(URLKey.maxLength) bytes") }
            return await fetch(try URLKey(parsing: line.text), spelling: line.text)
        } catch {
            return Self.invalid(line.text, reason: error.reason)
        }
    }

    /// `--max-cache-size` for a library run: trims the cache to ``FetchOptions/maxCacheSize``,
    /// least recently used first, the keys of `summary` (the run just ended) last. Runs on
    /// a thread of its own: it may wait for a `clean` elsewhere to release the cache.
    ///
    /// - Throws: ``CacheError`` when the cache cannot be read or written.
    @discardableResult
    public func keepCacheCap(after summary: RunSummary = RunSummary()) async throws(CacheError) -> CleanReport {
        try await cache.trim(to: options.maxCacheSize, protecting: summary.usedKeys)
    }

    private static func invalid(_ text: String, reason: String) -> FetchResult {
        FetchResult(url: text, key: nil, status: .invalid, failure: FetchFailure(.invalidURL, reason))
    }
}
