internal import CCurl
internal import CSDFetchShims
import FoundationEssentials
import Synchronization

/// `curl_global_init` must run once, before any handle exists and before other threads use curl.
let curlGlobalInit: Void = {
    _ = curl_global_init(3)  // CURL_GLOBAL_ALL = CURL_GLOBAL_SSL | CURL_GLOBAL_WIN32
}()

/// Runs HTTP transfers on libcurl multi handles, each driven by a dedicated thread: one,
/// or two on a machine of two cores or more when `-j` is 16 or more and no `--limit-rate`
/// caps the whole run. A host's requests all go to one loop (chosen by its name), which
/// keeps its connections, its `--per-host` count and its probes (<doc:Fetching#Loop-threads>).
///
/// At most `maxTransfers` (`-j`) transfers run at once, across the loops
/// (``TransferLanes``); the rest wait in arrival order. Connections are kept alive and
/// reused across transfers through each multi handle's connection cache, and HTTP/2 is
/// used when a TLS server offers it.
///
/// Lifetime, in the manner of swift-nio's event loops: a loop thread holds only its
/// ``Core``, never the engine, so an engine nobody shuts down is noticed: its
/// `deinit` asserts that ``shutdown()`` finished (and, in release builds, asks the loop to
/// stop rather than leak a thread). Prefer ``withCurlEngine(maxTransfers:pacing:isolation:_:)``
/// or ``withFetcher(options:cache:now:notes:isolation:_:)``, which shut down on every exit.
public final class CurlEngine: Sendable {
    struct Pending: Sendable {
        let id: UInt64
        let request: TransferRequest
        /// The request's origin (``URLKey/origin``), found by the caller's
        /// thread rather than the loop's.
        let host: String
        let hostFailureLimit: Int
        let continuation: CheckedContinuation<TransferResponse, Never>
    }

    /// What other threads hand the loop; it takes everything at once each turn.
    struct Inbox: Sendable {
        var pending: [Pending] = []
        /// Requests that will come later (``expect(_:hostFailureLimit:distant:)``): their hosts may
        /// be probed ahead of their turn.
        var expected: [Expected] = []
        var cancelled: [UInt64] = []
        var isCancellingAll = false
        var isShuttingDown = false
        /// The loop is blocked (or about to block) in `curl_multi_poll` and nobody has
        /// woken it yet: the next poster calls `curl_multi_wakeup`, later ones need not.
        var isLoopPolling = false
    }

    /// Whether the loop thread has ended, and who waits for it to end.
    struct Exit: Sendable {
        var isStopped = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// What one loop thread and the posting threads share; the thread holds this, not the engine.
    ///
    /// `@unchecked Sendable`: `multi` is touched only by the loop thread (``TransferLoop``),
    /// except `curl_multi_wakeup`, which libcurl documents as thread-safe, and the cleanup in
    /// `deinit`, which runs once neither the thread nor the engine holds the core. `inbox`
    /// and `exit` are guarded by their `Mutex`es; `lanes`, `hostHealth` and `interruption`
    /// are `Sendable`, shared by the engine's loops, and guard themselves.
    final class Core: @unchecked Sendable {
        /// This loop's place among the engine's loops.
        let index: Int
        /// `-j`, across the engine's loops.
        var maxTransfers: Int { lanes.limit }
        /// New hosts probed at once outside `-j` by this loop (``HostProbes``).
        let probeCapacity: Int
        let pacing: TransferPacing
        let multi: UnsafeMutableRawPointer
        let inbox = Mutex(Inbox())
        let exit = Mutex(Exit())
        /// The `-j` slots, taken by every loop of the engine.
        let lanes: TransferLanes
        /// Consecutive connection failures per host for this engine's run (`--host-failures`).
        let hostHealth: HostHealth
        /// Tripped by ``CurlEngine/cancelAll()``; backoff sleeps wait on it.
        let interruption: Interruption
        /// Sockets curl holds for this loop's transfers; outlives every connection
        /// (``OpenSocketCount``).
        let openSockets = OpenSocketCount()
        /// Transfers running, stored by the loop once per turn for progress displays.
        let runningCount = Atomic<Int>(0)

        /// Loop `index` of `lanes`' loops, on `multi` (from ``makeMulti()``, freed by this core).
        init(
            index: Int, multi: UnsafeMutableRawPointer, lanes: TransferLanes, pacing: TransferPacing,
            hostHealth: HostHealth, interruption: Interruption
        ) {
            self.multi = multi
            self.index = index
            self.lanes = lanes
            let maxTransfers = lanes.limit
            let loops = lanes.loops
            self.pacing = pacing
            self.hostHealth = hostHealth
            self.interruption = interruption
            let allProbes = HostProbes.capacity(maxTransfers: maxTransfers)
            probeCapacity = (allProbes + loops - 1) / loops
            // Never more connections than transfers and probes (the descriptors the CLI
            // budgets), across the loops; keep that many alive for reuse. A probe counts: at
            // a limit of `-j` alone, probes of dead hosts would hold connections transfers are
            // waiting for.
            let connections = (maxTransfers + allProbes + loops - 1) / loops
            _ = CSDFetch_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, connections)
            _ = CSDFetch_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, connections)
            // `--per-host` counts connections: an HTTP/2 host, allowed a connection's streams by
            // the ``HostScheduler``, still gets no more connections than that.
            if pacing.perHost > 0 {
                _ = CSDFetch_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, pacing.perHost)
            }
        }

        deinit {
            curl_multi_cleanup(multi)
        }

        static func makeMulti() -> UnsafeMutableRawPointer {
            guard let multi = curl_multi_init() else { preconditionFailure("curl_multi_init failed: out of memory") }
            return multi
        }

        /// Hands the loop what `add` puts in the inbox (false: nothing, refused), unless it
        /// is shutting down or cancelling everything; wakes it when it polls. Returns
        /// whether it was taken.
        func post(_ add: (inout Inbox) -> Bool) -> Bool {
            let (isTaken, mustWake) = inbox.withLock { inbox -> (Bool, Bool) in
                guard !inbox.isShuttingDown, !inbox.isCancellingAll, add(&inbox) else { return (false, false) }
                defer { inbox.isLoopPolling = false }
                return (true, inbox.isLoopPolling)
            }
            if mustWake { curl_multi_wakeup(multi) }
            return isTaken
        }

        /// Asks the loop to end once in-flight transfers are done; returns at once.
        func requestShutdown() {
            inbox.withLock { $0.isShuttingDown = true }
            curl_multi_wakeup(multi)
        }

        /// The loop thread's last act: marks it stopped and resumes whoever waits for that.
        func didStop() {
            let waiters = exit.withLock { exit in
                exit.isStopped = true
                defer { exit.waiters = [] }
                return exit.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        var isStopped: Bool { exit.withLock { $0.isStopped } }
    }

    /// The loops, a host's requests always to the same one (``loop(for:loops:)``).
    let cores: [Core]
    private let nextID = Atomic<UInt64>(0)

    /// `-j`: transfers at once.
    public var maxTransfers: Int { cores[0].maxTransfers }
    /// `--per-host`, `--wait`, `--limit-rate`, enforced by the loops.
    public var pacing: TransferPacing { cores[0].pacing }
    /// Consecutive connection failures per host for this engine's run (`--host-failures`).
    let hostHealth: HostHealth
    /// Tripped by ``cancelAll()``; backoff sleeps wait on it.
    let interruption: Interruption
    /// Transfers running now, for progress displays.
    var runningCount: Int { cores.reduce(0) { $0 + $1.runningCount.load(ordering: .relaxed) } }

    /// Starts the loop threads. `maxTransfers` is `-j`. Call ``shutdown()`` before letting go.
    public init(maxTransfers: Int, pacing: TransferPacing = TransferPacing()) {
        _ = curlGlobalInit
        let maxTransfers = max(1, maxTransfers)
        let loops = Self.loopCount(maxTransfers: maxTransfers, pacing: pacing)
        let multis = (0..<loops).map { _ in Core.makeMulti() }
        let lanes = TransferLanes(limit: maxTransfers, multis: multis.map(TransferLanes.MultiHandle.init))
        let (hostHealth, interruption) = (HostHealth(), Interruption())
        self.hostHealth = hostHealth
        self.interruption = interruption
        cores = multis.enumerated().map { index, multi in
            Core(
                index: index, multi: multi, lanes: lanes, pacing: pacing, hostHealth: hostHealth,
                interruption: interruption)
        }
        for core in cores {
            DedicatedThread.start(name: "sdfetch-curl") {
                TransferLoop(engine: core).run()
                core.didStop()
            }
        }
    }

    deinit {
        let isStopped = cores.allSatisfy(\.isStopped)
        assert(isStopped, "CurlEngine released before shutdown() finished: call it, or use withCurlEngine")
        // Release builds: do not leak polling threads and their connections.
        if !isStopped { for core in cores { core.requestShutdown() } }
    }

    /// Loop threads for a run: two when the machine has the cores and `-j` the work for
    /// them, one under `--limit-rate` (a cap on the whole run, kept by one loop).
    static func loopCount(maxTransfers: Int, pacing: TransferPacing) -> Int {
        guard maxTransfers >= 16, pacing.bytesPerSecond == nil else { return 1 }
        return min(2, max(1, ProcessInfo.processInfo.activeProcessorCount))
    }

    /// The loop of `host` (``URLKey/origin``): the same for the engine's life, from
    /// the name's bytes (``FNV1a``) rather than Swift's per-process seeded hash, so a test
    /// can tell where a host goes.
    static func loop(for host: String, loops: Int) -> Int {
        guard loops > 1 else { return 0 }
        return Int(FNV1a.hash(host.utf8) % UInt64(loops))
    }

    private func core(for host: String) -> Core { cores[Self.loop(for: host, loops: cores.count)] }

    /// Performs one transfer. Cancelling the calling task drops the transfer and returns
    /// an `interrupted` failure.
    public func perform(_ request: TransferRequest) async -> TransferResponse {
        await perform(request, hostFailureLimit: 0)
    }

    /// Performs one transfer unless its host is down: with `hostFailureLimit` N > 0, a
    /// request whose host failed N connections in a row (see ``HostHealth``) fails as
    /// `host-down` when its turn comes, without dialling.
    public func perform(_ request: TransferRequest, hostFailureLimit: Int) async -> TransferResponse {
        let host = URLKey.origin(of: request.url)
        let core = core(for: host)
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let pending = Pending(
                    id: id, request: request, host: host, hostFailureLimit: hostFailureLimit,
                    continuation: continuation)
                let isAccepted = core.post { inbox in
                    // A task cancelled before this point had its handler run already, with
                    // nothing to cancel yet: refuse here instead.
                    guard !Task.isCancelled else { return false }
                    inbox.pending.append(pending)
                    return true
                }
                if !isAccepted {
                    continuation.resume(
                        returning: TransferResponse(failure: FetchFailure(.interrupted, "transfer cancelled")))
                }
            }
        } onCancel: {
            core.inbox.withLock { $0.cancelled.append(id) }
            curl_multi_wakeup(core.multi)
        }
    }

    /// Says that `request` will be performed later (the caller's input holds it, its turn has
    /// not come): a host not met before is probed now (``HostProbes``), so a dead one's
    /// connect timeout overlaps the transfers ahead of it. `distant`: its turn is far off
    /// (probed after the hosts of nearer requests). Returns at once; nothing is sent.
    public func expect(_ request: TransferRequest, hostFailureLimit: Int, distant: Bool = false) {
        // Without probes (a proxy, `-j` under 4) the loop has no use for it: nothing to post.
        guard cores[0].probeCapacity > 0 else { return }
        let host = URLKey.origin(of: request.url)
        let expected = Expected(request: request, host: host, hostFailureLimit: hostFailureLimit, isDistant: distant)
        _ = core(for: host).post { inbox in
            inbox.expected.append(expected)
            return true
        }
    }

    /// Descriptors one transfer (or one probe of a new host) may hold at once: its socket
    /// and a name lookup's pair in curl's threaded resolver.
    public static let descriptorsPerTransfer = 3
    /// Descriptors a process running an engine keeps for everything else: standard streams,
    /// curl's wake-up pipe, locks, inputs, an entry file being stored.
    public static let descriptorsReserved = 64

    /// A request announced by ``expect(_:hostFailureLimit:distant:)``.
    struct Expected {
        let request: TransferRequest
        let host: String
        let hostFailureLimit: Int
        let isDistant: Bool
    }

    /// Ends every transfer, queued or running, with `interrupted` (Ctrl-C), wakes every
    /// backoff sleep, and refuses new transfers. Returns at once; callers see their
    /// `perform` return within one turn of the loop.
    public func cancelAll() {
        for core in cores { core.inbox.withLock { $0.isCancellingAll = true } }
        interruption.trip()
        for core in cores { curl_multi_wakeup(core.multi) }
    }

    /// Stops the loop threads once in-flight transfers are done, and returns when they have
    /// ended (each one's last act resumes this call: no polling, no blocked thread). Idempotent.
    public func shutdown() async {
        for core in cores { core.requestShutdown() }
        for core in cores {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let isStopped = core.exit.withLock { exit in
                    if !exit.isStopped { exit.waiters.append(continuation) }
                    return exit.isStopped
                }
                if isStopped { continuation.resume() }
            }
        }
    }
}

/// Runs `body` with a new engine and shuts it down when `body` ends, however it ends
/// (returns, throws, or its task is cancelled): the engine's lifetime is the scope.
public func withCurlEngine<T, E: Error>(
    maxTransfers: Int, pacing: TransferPacing = TransferPacing(),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (CurlEngine) async throws(E) -> T
) async throws(E) -> T {
    try await withLifetime(
        of: CurlEngine(maxTransfers: maxTransfers, pacing: pacing), end: { await $0.shutdown() }, body)
}
