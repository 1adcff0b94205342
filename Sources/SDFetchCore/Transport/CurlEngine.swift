internal import CCurl
internal import CSDFetchShims
import FoundationEssentials
import Synchronization

/// `curl_global_init` must run once, before any handle exists and before other threads use curl.
private let curlGlobalInit: Void = {
    _ = curl_global_init(3)  // CURL_GLOBAL_ALL = CURL_GLOBAL_SSL | CURL_GLOBAL_WIN32
}()

/// Runs HTTP transfers on one libcurl multi handle driven by a dedicated thread.
///
/// At most `maxTransfers` (`-j`) transfers run at once; the rest wait in arrival order.
/// Connections are kept alive and reused across transfers through the multi handle's
/// connection cache, and HTTP/2 is used when a TLS server offers it.
///
/// Lifetime, in the manner of swift-nio's event loops: the loop thread holds only the
/// engine's ``Core``, never the engine, so an engine nobody shuts down is noticed: its
/// `deinit` asserts that ``shutdown()`` finished (and, in release builds, asks the loop to
/// stop rather than leak a thread). Prefer ``withCurlEngine(maxTransfers:pacing:isolation:_:)``
/// or ``withFetcher(options:cache:now:notes:isolation:_:)``, which shut down on every exit.
public final class CurlEngine: Sendable {
    struct Pending: Sendable {
        let id: UInt64
        let request: TransferRequest
        /// The request's host and port (``HostHealth/host(of:)``), found by the caller's
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

    /// What the loop thread and the posting threads share; the thread holds this, not the engine.
    ///
    /// `@unchecked Sendable`: `multi` is touched only by the loop thread (``TransferLoop``),
    /// except `curl_multi_wakeup`, which libcurl documents as thread-safe, and the cleanup in
    /// `deinit`, which runs once neither the thread nor the engine holds the core. `inbox`
    /// and `exit` are guarded by their `Mutex`es; `nextID` is an atomic; `hostHealth` and
    /// `interruption` are `Sendable` and guard themselves.
    final class Core: @unchecked Sendable {
        let maxTransfers: Int
        /// New hosts probed at once outside `-j` (``HostProbes``).
        let probeCapacity: Int
        let pacing: TransferPacing
        let multi: UnsafeMutableRawPointer
        let inbox = Mutex(Inbox())
        let exit = Mutex(Exit())
        /// Consecutive connection failures per host for this engine's run (`--host-failures`).
        let hostHealth = HostHealth()
        /// Tripped by ``CurlEngine/cancelAll()``; backoff sleeps wait on it.
        let interruption = Interruption()
        let nextID = Atomic<UInt64>(0)
        /// Sockets curl holds for transfers; outlives every connection (``OpenSocketCount``).
        let openSockets = OpenSocketCount()
        /// Transfers running, stored by the loop once per turn for progress displays.
        let runningCount = Atomic<Int>(0)

        init(maxTransfers: Int, pacing: TransferPacing) {
            guard let multi = curl_multi_init() else { preconditionFailure("curl_multi_init failed: out of memory") }
            self.multi = multi
            self.maxTransfers = maxTransfers
            self.pacing = pacing
            probeCapacity = HostProbes.capacity(maxTransfers: maxTransfers)
            // Never more connections than transfers and probes (the descriptors the CLI
            // budgets); keep that many alive for reuse. A probe counts: at a limit of `-j`
            // alone, probes of dead hosts would hold connections transfers are waiting for.
            let connections = maxTransfers + probeCapacity
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

    let core: Core

    /// `-j`: transfers at once.
    public var maxTransfers: Int { core.maxTransfers }
    /// `--per-host`, `--wait`, `--limit-rate`, enforced by the loop.
    public var pacing: TransferPacing { core.pacing }
    /// Consecutive connection failures per host for this engine's run (`--host-failures`).
    var hostHealth: HostHealth { core.hostHealth }
    /// Tripped by ``cancelAll()``; backoff sleeps wait on it.
    var interruption: Interruption { core.interruption }

    /// Starts the loop thread. `maxTransfers` is `-j`. Call ``shutdown()`` before letting go.
    public init(maxTransfers: Int, pacing: TransferPacing = TransferPacing()) {
        _ = curlGlobalInit
        let core = Core(maxTransfers: max(1, maxTransfers), pacing: pacing)
        self.core = core
        DedicatedThread.start(name: "sdfetch-curl") {
            TransferLoop(engine: core).run()
            core.didStop()
        }
    }

    deinit {
        assert(core.isStopped, "CurlEngine released before shutdown() finished: call it, or use withCurlEngine")
        // Release builds: do not leak a polling thread and its connections.
        if !core.isStopped { core.requestShutdown() }
    }

    /// Performs one transfer. Cancelling the calling task drops the transfer and returns
    /// an `interrupted` failure.
    public func perform(_ request: TransferRequest) async -> TransferResponse {
        await perform(request, hostFailureLimit: 0)
    }

    /// Performs one transfer unless its host is down: with `hostFailureLimit` N > 0, a
    /// request whose host failed N connections in a row (see ``HostHealth``) fails as
    /// `host-down` when its turn comes, without dialling.
    public func perform(_ request: TransferRequest, hostFailureLimit: Int) async -> TransferResponse {
        let core = self.core
        let id = core.nextID.wrappingAdd(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let pending = Pending(
                    id: id, request: request, host: HostHealth.host(of: request.url),
                    hostFailureLimit: hostFailureLimit, continuation: continuation)
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
        guard core.probeCapacity > 0 else { return }
        let expected = Expected(
            request: request, host: HostHealth.host(of: request.url), hostFailureLimit: hostFailureLimit,
            isDistant: distant)
        _ = core.post { inbox in
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
        core.inbox.withLock { $0.isCancellingAll = true }
        core.interruption.trip()
        curl_multi_wakeup(core.multi)
    }

    /// Stops the loop thread once in-flight transfers are done, and returns when the thread
    /// has ended (its last act resumes this call: no polling, no blocked thread). Idempotent.
    public func shutdown() async {
        core.requestShutdown()
        let core = self.core
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isStopped = core.exit.withLock { exit in
                if !exit.isStopped { exit.waiters.append(continuation) }
                return exit.isStopped
            }
            if isStopped { continuation.resume() }
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
