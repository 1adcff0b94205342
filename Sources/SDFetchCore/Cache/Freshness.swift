import FoundationEssentials

/// The one freshness rule (`--max-age`, <doc:OnDiskFormat#How-it-stays-right>): something stored
/// or recorded at time `t` is fresh while `t` is after `now - maxAge`, and expired from then
/// on. Cache entries, failed-URL records and `clean` all ask it here, the first two with dates,
/// `clean` with the cache's nanoseconds since 1970 (file times and index records), so the
/// boundary is one inequality.
public struct Freshness: Sendable, Equatable {
    public let maxAge: Duration

    public init(maxAge: Duration) {
        self.maxAge = maxAge
    }

    /// How far in the future a time may lie and still be believed: clock steps between
    /// a store and its use. Anything later is a forged or broken record: expired.
    static let futureAllowance: Duration = .seconds(60)

    /// Whether what was stored at `time` may still be used at `now`.
    public func isFresh(_ time: Date, now: Date) -> Bool {
        let time = FileTime.nanoseconds(time)
        let now = FileTime.nanoseconds(now)
        return time > expiredUpTo(now: now) && time <= Self.latestBelievable(now: now)
    }

    /// The latest time (ns since 1970) believed at `now`; later ones count as expired, so a
    /// record dated 2100 never outlives `clean --max-age 1s`.
    static func latestBelievable(now: Int64) -> Int64 {
        let latest = now.addingReportingOverflow(nanoseconds(futureAllowance))
        return latest.overflow ? Int64.max : latest.partialValue
    }

    /// The latest time (ns since 1970) that is expired at `now` (ns since 1970): `clean`
    /// removes what was stored at or before it. Saturates instead of overflowing, so a huge
    /// `--max-age` keeps everything.
    func expiredUpTo(now: Int64) -> Int64 {
        let expiry = now.subtractingReportingOverflow(Self.nanoseconds(maxAge))
        return expiry.overflow ? Int64.min : expiry.partialValue
    }

    /// `duration` in whole nanoseconds, saturated at the ends of `Int64`.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? (seconds < 0 ? Int64.min : Int64.max) : whole + attoseconds / 1_000_000_000
    }
}
