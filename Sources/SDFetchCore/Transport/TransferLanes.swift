internal import CCurl
import Synchronization

/// The `-j` slots of an engine, shared by its loop threads (<doc:Fetching#Loop-threads>).
///
/// A loop takes a lane before it starts a transfer and gives it back when the transfer
/// ends. Any loop may take every free lane, except while another loop waits for one: then
/// a loop holding its fair share (`-j` over the loops) takes no more, so lanes its own
/// transfers free go to the waiting loop, which is woken for them. Without that rule a
/// loop whose queue filled first would refill every lane it frees and leave the other
/// loop's hosts, and its thread, idle until that queue drained.
final class TransferLanes: Sendable {
    /// `-j`.
    let limit: Int
    /// Loop threads taking lanes.
    var loops: Int { wakeups.count }
    /// A loop's share while another waits: `-j` over the loops, rounded up.
    let fairShare: Int
    private let used = Atomic<Int>(0)
    /// A bit per loop with a request it could start and no lane for it: set before it
    /// polls, cleared once it has nothing left to start.
    private let starved = Atomic<UInt64>(0)
    /// Each loop's multi handle, for `curl_multi_wakeup` (thread-safe in libcurl).
    private let wakeups: [MultiHandle]

    /// A multi handle freed only after every loop has stopped: no loop waits for a lane
    /// then, so none is woken through a freed handle.
    struct MultiHandle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    init(limit: Int, multis: [MultiHandle]) {
        self.limit = limit
        self.wakeups = multis
        // Rounded up: two loops at their share can never leave a lane free between them.
        let loops = max(1, multis.count)
        fairShare = max(1, (limit + loops - 1) / loops)
    }

    var inUse: Int { used.load(ordering: .sequentiallyConsistent) }
    var isFull: Bool { inUse >= limit }

    /// Lanes loop `loop`, running `running` transfers, may take now (none to spare: 0).
    func available(to loop: Int, running: Int) -> Int {
        let free = limit - inUse
        guard free > 0 else { return 0 }
        let others = starved.load(ordering: .sequentiallyConsistent) & ~(UInt64(1) << UInt64(loop))
        return others == 0 ? free : min(free, max(0, fairShare - running))
    }

    /// Takes up to `wanted` lanes for loop `loop`, running `running` transfers; returns how
    /// many it got (each to be given back by ``release(_:from:)``).
    func take(upTo wanted: Int, for loop: Int, running: Int) -> Int {
        while true {
            let count = min(wanted, available(to: loop, running: running))
            guard count > 0 else { return 0 }
            let current = used.load(ordering: .sequentiallyConsistent)
            guard current + count <= limit else { continue }
            if used.compareExchange(expected: current, desired: current + count, ordering: .sequentiallyConsistent)
                .exchanged
            {
                return count
            }
        }
    }

    /// Loop `loop` gives lanes back, waking every other loop waiting for one (`loop` itself
    /// is awake: it looks for lanes again before it polls).
    func release(_ count: Int = 1, from loop: Int) {
        guard count > 0 else { return }
        used.subtract(count, ordering: .sequentiallyConsistent)
        let waiting = starved.load(ordering: .sequentiallyConsistent) & ~(UInt64(1) << UInt64(loop))
        guard waiting != 0 else { return }
        for (index, multi) in wakeups.enumerated() where waiting & (UInt64(1) << UInt64(index)) != 0 {
            curl_multi_wakeup(multi.pointer)
        }
    }

    /// Loop `loop` is about to poll with a request it could start but no lane: marks it
    /// waiting (until ``stopWaiting(loop:)``), then looks again. Returns false when a lane
    /// came free in between (do not poll). Marking before looking pairs with
    /// ``release(_:from:)``, which frees before it reads the marks: one of the two sees
    /// the other.
    func waitForLane(loop: Int, running: Int) -> Bool {
        starved.bitwiseOr(UInt64(1) << UInt64(loop), ordering: .sequentiallyConsistent)
        return available(to: loop, running: running) == 0
    }

    /// Loop `loop` has nothing left it could start: the other loops may take every lane.
    /// Not on waking: a loop that cleared its mark while it took the lanes being freed
    /// would let the loop freeing them take them back first.
    func stopWaiting(loop: Int) {
        starved.bitwiseAnd(~(UInt64(1) << UInt64(loop)), ordering: .sequentiallyConsistent)
    }
}
