/// Which waiting request to one host may start now under ``TransferPacing``.
///
/// Loop-thread state of the ``TransferLoop`` (never `Sendable`). A host no connection has
/// reached yet gets one transfer, a probe, until a connection to it is made: a host that
/// swallows connections then holds one slot of `-j` for its connect timeout instead of
/// `--per-host` of them, and a live one gets its other lanes one round trip later. A
/// request whose host is at its limit, paused by its `Retry-After`, being probed
/// (``HostProbes``), or whose last request was sent less
/// than `--wait` ago (or is not sent yet), is held here in its host's queue while requests
/// to other hosts go ahead; it starts once a transfer to its host ends or its wait is over.
/// Held requests are bounded by what the fetcher keeps in flight (a few times `-j`), and
/// each turn looks at the hosts that hold requests, not at every held request, so a dead or
/// slow host with hundreds of queued URLs costs one look per turn.
struct HostScheduler {
    struct Held {
        let pending: CurlEngine.Pending
        let host: String
    }

    /// Transfers one multiplexing connection carries at most (HTTP/2 streams), the
    /// browser's limit and libcurl's default `CURLMOPT_MAX_CONCURRENT_STREAMS`.
    static let streamsPerConnection = 100

    private struct HostState {
        var running = 0
        /// Started transfers whose request has not been sent yet: the next request waits
        /// for their send time before its `--wait` can count.
        var unsent = 0
        /// Monotonic nanoseconds at which the last request to the host was sent.
        var lastSent: UInt64?
        /// A connection to the host was made: it gets all its lanes, not just a probe.
        var isReached = false
        /// The host answered over HTTP/2: one connection carries many transfers.
        var isMultiplexed = false
        /// No new request before this monotonic time: the host's `Retry-After`.
        var pausedUntil: UInt64?

        /// Whether the state says more than a fresh one would, so it must be kept.
        func matters(wait: UInt64, now: UInt64) -> Bool {
            running > 0 || isReached || (wait > 0 && lastSent != nil) || (pausedUntil.map { $0 > now } ?? false)
        }
    }

    /// One host's held requests, oldest first, consumed from the front.
    let pacing: TransferPacing
    private let wait: UInt64
    private var hosts: [String: HostState] = [:]
    /// Hosts whose ``HostProbes`` probe runs: their requests wait for its outcome.
    private var probing: Set<String> = []
    private var queues: [String: FirstInFirstOut<Held>] = [:]
    /// Hosts with held requests, in the order they first had to hold one.
    private var holdingHosts: [String] = []
    private(set) var heldCount = 0

    init(pacing: TransferPacing) {
        self.pacing = pacing
        wait = pacing.waitNanoseconds
    }

    var isEmpty: Bool { heldCount == 0 }

    /// Transfers `host` may have in flight: one until a connection reached it, then
    /// `--per-host`, or a connection's streams once the host is known to multiplex (curl's
    /// `CURLMOPT_MAX_HOST_CONNECTIONS` still caps the connections, and `CURLOPT_PIPEWAIT`
    /// puts the streams on one); nil: no limit.
    private func limit(for state: HostState) -> Int? {
        guard pacing.perHost > 0 else { return nil }
        guard state.isReached else { return 1 }
        return state.isMultiplexed ? max(pacing.perHost, Self.streamsPerConnection) : pacing.perHost
    }

    /// Whether a new transfer to `host` may start at `now`.
    func mayStart(_ host: String, now: UInt64) -> Bool {
        if !probing.isEmpty, probing.contains(host) { return false }
        guard let state = hosts[host] else { return true }  // a probe
        if let limit = limit(for: state), state.running >= limit { return false }
        if let pausedUntil = state.pausedUntil, pausedUntil > now { return false }
        guard wait > 0 else { return true }
        if state.unsent > 0 { return false }
        guard let lastSent = state.lastSent else { return true }
        return now &- lastSent >= wait
    }

    /// Whether a request to `host` must queue behind others already held for it, so a
    /// host's requests start in arrival order.
    func hasHeld(for host: String) -> Bool {
        queues[host] != nil
    }

    mutating func hold(_ pending: CurlEngine.Pending, host: String) {
        if queues[host] == nil { holdingHosts.append(host) }
        queues[host, default: FirstInFirstOut()].append(Held(pending: pending, host: host))
        heldCount += 1
    }

    /// Removes and returns the held requests that may start now, at most `capacity` of
    /// them, each host's in arrival order; each is counted as started.
    mutating func takeStartable(now: UInt64, capacity: Int) -> [Held] {
        guard capacity > 0, heldCount > 0 else { return [] }
        var startable: [Held] = []
        var index = 0
        while index < holdingHosts.count, startable.count < capacity {
            let host = holdingHosts[index]
            guard var queue = queues.removeValue(forKey: host) else {
                preconditionFailure("a holding host without a queue")
            }
            while !queue.isEmpty, startable.count < capacity, mayStart(host, now: now), let held = queue.popFirst() {
                startable.append(held)
                started(host)
            }
            if queue.isEmpty {
                holdingHosts.remove(at: index)
            } else {
                queues[host] = queue
                index += 1
            }
        }
        heldCount -= startable.count
        return startable
    }

    /// Takes the held requests `matching`, e.g. cancelled ones.
    mutating func removeHeld(where matching: (CurlEngine.Pending) -> Bool) -> [CurlEngine.Pending] {
        var removed: [CurlEngine.Pending] = []
        for host in holdingHosts {
            guard var queue = queues[host] else { continue }
            queue.removeAll { item in
                guard matching(item.pending) else { return false }
                removed.append(item.pending)
                return true
            }
            queues[host] = queue.isEmpty ? nil : queue
        }
        holdingHosts.removeAll { queues[$0] == nil }
        heldCount -= removed.count
        return removed
    }

    /// Counts a transfer to `host` as running and not yet sent.
    mutating func started(_ host: String) {
        hosts[host, default: HostState()].running += 1
        hosts[host, default: HostState()].unsent += 1
    }

    /// curl is about to send a request to `host` (its pre-request callback ran): a
    /// connection reached it.
    mutating func sent(_ host: String, at time: UInt64, firstForTransfer: Bool) {
        guard var state = hosts[host] else { return }
        state.isReached = true
        if firstForTransfer { state.unsent = max(0, state.unsent - 1) }
        state.lastSent = time
        hosts[host] = state
    }

    /// A transfer to `host` ended; `wasSent` tells whether its request had gone out.
    mutating func finished(_ host: String, wasSent: Bool, now: UInt64) {
        guard var state = hosts[host] else { return }
        state.running -= 1
        if !wasSent { state.unsent = max(0, state.unsent - 1) }
        // Forget idle hosts unless something learned still matters, so memory follows hosts in use.
        hosts[host] = state.matters(wait: wait, now: now) ? state : nil
    }

    /// A connection probe of `host` started (true) or ended (false): meanwhile its requests wait.
    mutating func setProbing(_ host: String, _ isProbing: Bool) {
        if isProbing { probing.insert(host) } else { probing.remove(host) }
    }

    /// `host` answered over HTTP/2: from now on it may carry a connection's streams.
    mutating func multiplexes(_ host: String) {
        hosts[host, default: HostState()].isReached = true
        hosts[host, default: HostState()].isMultiplexed = true
    }

    /// `host` asked for a pause (`429` or `503` with `Retry-After`): none of its requests
    /// starts before `until`; other hosts are not touched.
    mutating func pause(_ host: String, until: UInt64) {
        let current = hosts[host, default: HostState()].pausedUntil ?? 0
        hosts[host, default: HostState()].pausedUntil = max(current, until)
    }

    /// Nanoseconds until the earliest held request's time-based hold ends (`--wait` or a
    /// `Retry-After` pause); other reasons end with a transfer, which wakes the loop anyway.
    func nanosecondsUntilNextStart(now: UInt64) -> UInt64? {
        var earliest: UInt64?
        for host in holdingHosts {
            // A probe's end wakes the loop as a transfer's does.
            if probing.contains(host) { continue }
            // A host forgotten since it held requests has nothing in flight: start now.
            guard let state = hosts[host] else { return 0 }
            if let limit = limit(for: state), state.running >= limit { continue }
            var due: UInt64 = now
            if let pausedUntil = state.pausedUntil, pausedUntil > now { due = pausedUntil }
            if wait > 0 {
                if state.unsent > 0 { continue }
                if let lastSent = state.lastSent { due = max(due, lastSent &+ wait) }
            }
            let remaining = due > now ? due - now : 0
            earliest = min(earliest ?? remaining, remaining)
        }
        return earliest
    }
}
