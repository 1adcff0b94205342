import FoundationEssentials

/// Runs `body` with a new ``Fetcher`` and shuts its transfer thread down when `body` ends,
/// however it ends (returns, throws, or its task is cancelled): the fetcher's engine lives
/// exactly as long as the scope, in the manner of swift-nio's `withEventLoopGroup`.
///
/// The fetches `body` starts must be done when it returns (they are, when it awaits them);
/// the shutdown waits for transfers still running and then for the thread to end.
public func withFetcher<T, E: Error>(
    options: FetchOptions, cache: DiskCache, now: @escaping @Sendable () -> Date = Date.init,
    notes: (@Sendable (FetchNote) -> Void)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (Fetcher) async throws(E) -> T
) async throws(E) -> T {
    try await withLifetime(
        of: Fetcher(options: options, cache: cache, now: now, notes: notes), end: { await $0.shutdown() }, body)
}
