import FoundationEssentials
import Synchronization

/// A "now" that moves only when a test says so, for expiry tests without sleeping.
///
/// Hand ``read`` to `DiskCache(now:)` and `Fetcher(now:)`. Starts at a whole second so
/// dates survive the cache's nanosecond text and `timespec` round trips exactly.
public final class ManualClock: Sendable {
    private let current: Mutex<Date>

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    public var now: Date { current.withLock { $0 } }

    /// The closure form of ``now``.
    public var read: @Sendable () -> Date { { self.now } }

    public func advance(by duration: Duration) {
        current.withLock { $0 = $0.addingTimeInterval(duration.timeInterval) }
    }
}
