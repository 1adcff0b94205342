/// When and after how long a transient failure is tried again (`--retries`,
/// <doc:Fetching#Retries-and-timeouts>).
///
/// Waits start at ``baseDelay`` and double per retry up to ``maxDelay``, each scaled by a
/// random factor in 0.8...1.2 (never past ``maxDelay``) so that many URLs failing together
/// do not come back together. A `Retry-After` from the server is honoured up to
/// ``retryAfterCap``; the wait is never shorter than the backoff, so `Retry-After: 0`
/// does not turn into a tight loop. Only kinds with ``FetchFailure/Kind/isRetryable`` retry.
///
/// Tests set small delays here instead of sleeping for real seconds.
public struct RetryPolicy: Sendable, Equatable {
    /// Wait before the first retry: 0.5 s.
    public var baseDelay: Duration
    /// Longest backoff wait: 8 s.
    public var maxDelay: Duration
    /// Longest `Retry-After` honoured: 30 s; a longer one waits this long.
    public var retryAfterCap: Duration

    public init(
        baseDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(8),
        retryAfterCap: Duration = .seconds(30)
    ) {
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.retryAfterCap = retryAfterCap
    }

    /// Whether `failure`, the outcome of try number `attempt` (1-based), earns another try
    /// when `retries` extra tries are allowed.
    public func shouldRetry(_ failure: FetchFailure, afterAttempt attempt: Int, retries: Int) -> Bool {
        failure.kind.isRetryable && attempt <= retries
    }

    /// The wait before retry number `retry` (1 for the first retry).
    ///
    /// - Parameters:
    ///   - retryAfter: the server's `Retry-After` in seconds, if it sent one.
    ///   - jitter: a number in 0...1 choosing the random factor; random unless a test fixes it.
    public func delay(
        beforeRetry retry: Int, retryAfter: Double? = nil, jitter: Double = .random(in: 0...1)
    )
        -> Duration
    {
        let doublings = min(max(0, retry - 1), 30)
        let nominal = min(baseDelay * (1 << doublings), maxDelay)
        let backoff = min(nominal * (0.8 + 0.4 * min(max(jitter, 0), 1)), maxDelay)
        guard let retryAfter, retryAfter.isFinite, retryAfter > 0 else { return backoff }
        return max(backoff, .seconds(min(retryAfter, retryAfterCap.timeInterval)))
    }
}
