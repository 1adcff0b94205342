import FoundationEssentials
import SDFetchCore

extension Fetcher {
    /// A fetcher over the cache `directory/cache`, with millisecond backoff so tests of
    /// retries never wait long; `configure` adjusts the options further. Shut down when the
    /// current test ends (see ``TestScope``).
    public static func forTesting(
        in directory: TemporaryDirectory, now: @escaping @Sendable () -> Date = Date.init,
        _ configure: (inout FetchOptions) -> Void = { _ in }
    ) throws -> Fetcher {
        var options = FetchOptions()
        options.retryPolicy = RetryPolicy(baseDelay: .milliseconds(5), maxDelay: .milliseconds(20))
        configure(&options)
        return scoped(
            options: options, cache: try DiskCache(directory: directory.appending("cache"), now: now), now: now)
    }

    /// A fetcher shut down when the current test ends (see ``TestScope``).
    public static func scoped(
        options: FetchOptions, cache: DiskCache, now: @escaping @Sendable () -> Date = Date.init
    ) -> Fetcher {
        let fetcher = Fetcher(options: options, cache: cache, now: now)
        TestScope.onExit { await fetcher.shutdown() }
        return fetcher
    }

    /// Parses `url` and fetches it, reporting it under that spelling.
    public func fetch(url: String) async throws -> FetchResult {
        await fetch(try URLKey(parsing: url), spelling: url)
    }
}
