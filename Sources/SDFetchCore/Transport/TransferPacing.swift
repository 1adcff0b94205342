/// Run-wide politeness of a ``CurlEngine``: per-host limits, `Retry-After` pauses and a
/// total rate cap (`--per-host`, `--wait`, `--limit-rate`).
///
/// Enforced by the engine's loop thread when it decides which waiting request starts next
/// and by pausing transfers whose bytes would exceed the rate, so no pool thread ever
/// sleeps for them. A host is the URL's authority without userinfo (`host:port`), the
/// same key as ``HostHealth``.
public struct TransferPacing: Sendable, Equatable {
    /// Most transfers in flight to one host; 0 means no per-host limit.
    public var perHost: Int
    /// Least time between two requests sent to one host, measured between the moments
    /// curl sends them (after connecting), so set-up time never shortens the gap.
    public var wait: Duration
    /// Total body bytes per second over the whole run; nil means no cap.
    public var bytesPerSecond: Int64?
    /// Longest pause a host's `Retry-After` imposes on its other requests (the fetcher's
    /// ``RetryPolicy/retryAfterCap``).
    public var retryAfterCap: Duration = .seconds(30)

    public init(perHost: Int = 0, wait: Duration = .zero, bytesPerSecond: Int64? = nil) {
        self.perHost = perHost
        self.wait = wait
        self.bytesPerSecond = bytesPerSecond
    }

    var waitNanoseconds: UInt64 { wait.nanosecondsClamped }
}

extension Duration {
    /// Whole nanoseconds, 0 for negative durations, saturating instead of trapping.
    var nanosecondsClamped: UInt64 {
        let parts = components
        guard parts.seconds >= 0 else { return 0 }
        let (seconds, overflow) = UInt64(parts.seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .max }
        let (total, overflow2) = seconds.addingReportingOverflow(UInt64(max(0, parts.attoseconds / 1_000_000_000)))
        return overflow2 ? .max : total
    }
}
