internal import CCurl
internal import CSDFetchShims
import Foundation
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
/// `@unchecked Sendable`: `multi` is touched only by the loop thread (``TransferLoop``),
/// except `curl_multi_wakeup`, which libcurl documents as thread-safe. `inbox` is guarded
/// by its `Mutex`; `nextID` and `stopped` are atomics; `hostHealth` and `interruption`
/// are `Sendable` and guard themselves. Other threads only ever post to the inbox.
public final class CurlEngine: @unchecked Sendable {
    struct Pending: Sendable {
        let id: UInt64
        let request: TransferRequest
        let hostFailureLimit: Int
        let continuation: CheckedContinuation<TransferResponse, Never>
    }

    /// What other threads hand the loop; it takes everything at once each turn.
    struct Inbox: Sendable {
        var pending: [Pending] = []
        var cancelled: [UInt64] = []
        var isCancellingAll = false
        var isShuttingDown = false
        /// The loop is blocked (or about to block) in `curl_multi_poll` and nobody has
        /// woken it yet: the next poster calls `curl_multi_wakeup`, later ones need not.
        var isLoopPolling = false
    }

    public let maxTransfers: Int
    /// `--per-host`, `--wait`, `--limit-rate`, enforced by the loop.
    public let pacing: TransferPacing
    let multi: UnsafeMutableRawPointer
    let inbox = Mutex(Inbox())
    /// Consecutive connection failures per host for this engine's run (`--host-failures`).
    let hostHealth = HostHealth()
    /// Tripped by ``cancelAll()``; backoff sleeps wait on it.
    let interruption = Interruption()
    private let nextID = Atomic<UInt64>(0)
    private let stopped = Atomic<Bool>(false)

    /// Starts the loop thread. `maxTransfers` is `-j`.
    public init(maxTransfers: Int, pacing: TransferPacing = TransferPacing()) {
        _ = curlGlobalInit
        self.pacing = pacing
        guard let multi = curl_multi_init() else { preconditionFailure("curl_multi_init failed: out of memory") }
        self.multi = multi
        self.maxTransfers = max(1, maxTransfers)
        // Never more connections than transfers; keep that many alive for reuse.
        _ = CSDFetch_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, self.maxTransfers)
        _ = CSDFetch_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, self.maxTransfers)
        let thread = Thread { [self] in
            TransferLoop(engine: self).run()
            stopped.store(true, ordering: .releasing)
        }
        thread.name = "sdfetch-curl"
        thread.start()
    }

    deinit {
        curl_multi_cleanup(multi)
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
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let pending = Pending(
                    id: id, request: request, hostFailureLimit: hostFailureLimit, continuation: continuation)
                let (isAccepted, mustWake) = inbox.withLock { inbox in
                    // A task cancelled before this point had its handler run already, with
                    // nothing to cancel yet: refuse here instead.
                    guard !inbox.isShuttingDown, !inbox.isCancellingAll, !Task.isCancelled else {
                        return (false, false)
                    }
                    inbox.pending.append(pending)
                    defer { inbox.isLoopPolling = false }
                    return (true, inbox.isLoopPolling)
                }
                if mustWake { curl_multi_wakeup(multi) }
                if !isAccepted {
                    continuation.resume(
                        returning: TransferResponse(failure: FetchFailure(.interrupted, "transfer cancelled")))
                }
            }
        } onCancel: {
            inbox.withLock { $0.cancelled.append(id) }
            curl_multi_wakeup(multi)
        }
    }

    /// Ends every transfer, queued or running, with `interrupted` (Ctrl-C), wakes every
    /// backoff sleep, and refuses new transfers. Returns at once; callers see their
    /// `perform` return within one turn of the loop.
    public func cancelAll() {
        inbox.withLock { $0.isCancellingAll = true }
        interruption.trip()
        curl_multi_wakeup(multi)
    }

    /// Stops the loop thread once in-flight transfers are done. Waits for it.
    public func shutdown() {
        inbox.withLock { $0.isShuttingDown = true }
        curl_multi_wakeup(multi)
        while !stopped.load(ordering: .acquiring) { usleep(1000) }
    }
}
