/// `--limit-rate`: a token bucket shared by every transfer of one engine.
///
/// Loop-thread only (never `Sendable`): curl's write callbacks ask it before taking a
/// chunk of body; a chunk that would overdraw the bucket pauses its transfer
/// (`CURL_WRITEFUNC_PAUSE`, curl keeps the bytes), and the loop resumes paused transfers
/// once enough has been refilled. Tokens start at zero and only accrue with time, so the
/// bytes accepted by time T never exceed rate x T: a run of B bytes lasts at least B/rate.
final class RateLimiter {
    let bytesPerSecond: Double
    /// The bucket holds at most this much, so an idle spell does not bank a burst; it
    /// is at least one of curl's chunks (`CURL_MAX_WRITE_SIZE`, 16 KiB), or no chunk could pass.
    private let capacity: Double
    private var tokens: Double = 0
    private var lastRefill: UInt64
    /// Transfers paused for lack of tokens, resumed in this order (oldest first).
    private(set) var paused: [UInt64] = []
    /// The largest chunk a paused transfer asked for: what must accrue before resuming.
    private var wanted: Double = 0

    init(bytesPerSecond: Int64, now: UInt64) {
        self.bytesPerSecond = Double(max(1, bytesPerSecond))
        capacity = max(16_384, self.bytesPerSecond / 10)
        lastRefill = now
    }

    /// Whether a chunk of `count` bytes may be taken now; if so its tokens are spent.
    /// A chunk larger than the bucket passes when the bucket is full and leaves a debt.
    func admit(_ count: Int, transfer id: UInt64) -> Bool {
        let needed = min(Double(count), capacity)
        guard tokens >= needed else {
            wanted = max(wanted, needed)
            if !paused.contains(id) { paused.append(id) }
            return false
        }
        tokens -= Double(count)
        return true
    }

    /// Adds the tokens earned since the last refill.
    func refill(now: UInt64) {
        guard now > lastRefill else { return }
        tokens = min(capacity, tokens + Double(now - lastRefill) * bytesPerSecond / 1e9)
        lastRefill = now
    }

    /// The paused transfers to resume now (all of them once a chunk's worth has accrued;
    /// those that still cannot pass pause again), emptying the list.
    func takeResumable() -> [UInt64] {
        guard !paused.isEmpty, tokens >= wanted else { return [] }
        defer {
            paused.removeAll(keepingCapacity: true)
            wanted = 0
        }
        return paused
    }

    /// Forgets a finished transfer.
    func forget(_ id: UInt64) {
        paused.removeAll { $0 == id }
    }

    /// Nanoseconds until a paused transfer can resume, or nil when none is paused.
    func nanosecondsUntilResumable() -> UInt64? {
        guard !paused.isEmpty else { return nil }
        let missing = wanted - tokens
        guard missing > 0 else { return 0 }
        return UInt64((missing / bytesPerSecond * 1e9).rounded(.up))
    }
}
