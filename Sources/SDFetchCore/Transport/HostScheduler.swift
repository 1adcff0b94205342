/// Which waiting request to one host may start now under ``TransferPacing``.
///
/// Loop-thread state of the ``TransferLoop`` (never `Sendable`). A request whose host is at
/// its `--per-host` limit, or whose last request was sent less than `--wait` ago (or is
/// not sent yet), is held here in arrival order while requests to other hosts go ahead;
/// it starts once a transfer to its host ends or its wait is over. Held requests are
/// bounded by what the fetcher keeps in flight (a few times `-j`).
struct HostScheduler {
    struct Held {
        let pending: CurlEngine.Pending
        let host: String
    }

    private struct HostState {
        var running = 0
        /// Started transfers whose request has not been sent yet: the next request waits
        /// for their send time before its `--wait` can count.
        var unsent = 0
        /// Monotonic nanoseconds at which the last request to the host was sent.
        var lastSent: UInt64?
    }

    let pacing: TransferPacing
    private let wait: UInt64
    private var hosts: [String: HostState] = [:]
    private(set) var held: [Held] = []

    init(pacing: TransferPacing) {
        self.pacing = pacing
        wait = pacing.waitNanoseconds
    }

    var isEmpty: Bool { held.isEmpty }

    /// Whether a new transfer to `host` may start at `now`.
    func mayStart(_ host: String, now: UInt64) -> Bool {
        guard let state = hosts[host] else { return true }
        if pacing.perHost > 0, state.running >= pacing.perHost { return false }
        guard wait > 0 else { return true }
        if state.unsent > 0 { return false }
        guard let lastSent = state.lastSent else { return true }
        return now &- lastSent >= wait
    }

    mutating func hold(_ pending: CurlEngine.Pending, host: String) {
        held.append(Held(pending: pending, host: host))
    }

    /// Removes and returns, in arrival order, the held requests that may start now, at
    /// most `capacity` of them; each is counted as started.
    mutating func takeStartable(now: UInt64, capacity: Int) -> [Held] {
        guard capacity > 0, !held.isEmpty else { return [] }
        var startable: [Held] = []
        var index = 0
        while index < held.count, startable.count < capacity {
            if mayStart(held[index].host, now: now) {
                let item = held.remove(at: index)
                started(item.host)
                startable.append(item)
            } else {
                index += 1
            }
        }
        return startable
    }

    /// Takes the held requests `matching`, e.g. cancelled ones.
    mutating func removeHeld(where matching: (CurlEngine.Pending) -> Bool) -> [CurlEngine.Pending] {
        var removed: [CurlEngine.Pending] = []
        held.removeAll { item in
            guard matching(item.pending) else { return false }
            removed.append(item.pending)
            return true
        }
        return removed
    }

    /// Counts a transfer to `host` as running and not yet sent.
    mutating func started(_ host: String) {
        hosts[host, default: HostState()].running += 1
        hosts[host, default: HostState()].unsent += 1
    }

    /// curl is about to send a request to `host` (its pre-request callback ran).
    mutating func sent(_ host: String, at time: UInt64, firstForTransfer: Bool) {
        guard var state = hosts[host] else { return }
        if firstForTransfer { state.unsent = max(0, state.unsent - 1) }
        state.lastSent = time
        hosts[host] = state
    }

    /// A transfer to `host` ended; `wasSent` tells whether its request had gone out.
    mutating func finished(_ host: String, wasSent: Bool) {
        guard var state = hosts[host] else { return }
        state.running -= 1
        if !wasSent { state.unsent = max(0, state.unsent - 1) }
        // Forget idle hosts unless their wait still matters, so memory follows active hosts.
        if state.running == 0, wait == 0 || state.lastSent == nil {
            hosts[host] = nil
        } else {
            hosts[host] = state
        }
    }

    /// Nanoseconds until the earliest held request's wait is over, when waiting is what
    /// holds it (other reasons end with a transfer, which wakes the loop anyway).
    func nanosecondsUntilNextStart(now: UInt64) -> UInt64? {
        guard wait > 0 else { return nil }
        var earliest: UInt64?
        for item in held {
            guard let state = hosts[item.host], state.unsent == 0, let lastSent = state.lastSent else { continue }
            if pacing.perHost > 0, state.running >= pacing.perHost { continue }
            let due = lastSent &+ wait
            let remaining = due > now ? due - now : 0
            earliest = min(earliest ?? remaining, remaining)
        }
        return earliest
    }
}
