internal import CCurl
internal import CSDFetchShims

/// The loop thread of a ``CurlEngine``: the only code that touches its multi handle.
///
/// Never `Sendable`: made and used by the loop thread alone, so its state needs no lock;
/// the engine's inbox is the one shared thing it reads, under its `Mutex`, once per turn.
///
/// One turn: take everything posted (new requests, cancellations) in one lock, start
/// waiting transfers while ``TransferLanes`` has lanes for them, let curl work, collect
/// finished transfers, refill the freed lanes, and only then resume the finished callers'
/// continuations, so the wire is busy again before Swift code runs. Then drop stalled
/// transfers and wait in `curl_multi_poll` for sockets, curl's timers or a wakeup.
final class TransferLoop {
    private let engine: CurlEngine.Core
    private var running: [UInt64: CurlTransfer] = [:]
    private var waiting: [CurlEngine.Pending] = []
    /// Requests in `waiting` per host, to tell whether a connection is worth keeping.
    private var waitingPerHost: [String: Int] = [:]
    /// The inbox's other buffer: swapped with it each turn, emptied here, handed back next turn.
    private var spare: [CurlEngine.Pending] = []
    /// Index of the next waiting request: the queue is consumed from the front.
    private var waitingStart = 0
    /// Finished transfers' handles, re-armed for later requests (at most `-j` kept).
    private var idle: [CurlTransfer] = []
    private var finished: [(CheckedContinuation<TransferResponse, Never>, TransferResponse)] = []
    private var lastStallCheck: UInt64 = 0
    /// `--per-host`, `--wait` and `Retry-After` pauses: requests held back per host.
    private var scheduler: HostScheduler
    /// Sends noted by the pre-request callbacks, for the scheduler's `--wait`.
    private let sendLog = SendLog()
    /// `--limit-rate`; nil without a cap.
    private let rateLimiter: RateLimiter?
    /// Sockets opened for transfers, asked before a quiet transfer is declared stalled.
    private let sockets = SocketActivity()
    /// Connections to new hosts opened ahead of their turn, outside the slots of `-j`.
    private var probes: HostProbes

    /// How often running transfers are checked for stalls; `--timeout` is whole seconds,
    /// so a stall is reported at most a tenth of a second late.
    private static let stallCheckInterval: UInt64 = 100_000_000
    private static let idlePollMilliseconds: Int32 = 1000

    init(engine: CurlEngine.Core) {
        self.engine = engine
        scheduler = HostScheduler(pacing: engine.pacing)
        probes = HostProbes(capacity: engine.probeCapacity)
        rateLimiter = engine.pacing.bytesPerSecond.map {
            RateLimiter(bytesPerSecond: $0, now: MonotonicTime.nanoseconds())
        }
    }

    private var hasWaiting: Bool { waitingStart < waiting.count }
    private var hasHeld: Bool { !scheduler.isEmpty }
    /// Lanes this loop may take now.
    private var lanesAvailable: Int { engine.lanes.available(to: engine.index, running: running.count) }

    /// Runs until shutdown is requested and no transfer is left.
    func run() {
        while true {
            let isShuttingDown = takeInbox()
            startWaiting()
            if isShuttingDown && running.isEmpty && !hasWaiting && !hasHeld {
                for host in probes.cancelAll(on: engine.multi) { scheduler.setProbing(host, false) }
                break
            }
            if !isShuttingDown { launchProbes() }

            resumeRateLimited()
            var stillRunning: Int32 = 0
            curl_multi_perform(engine.multi, &stillRunning)
            noteSends()
            collectDone()
            startWaiting()
            resumeFinished()

            let now = MonotonicTime.nanoseconds()
            if now &- lastStallCheck >= Self.stallCheckInterval {
                lastStallCheck = now
                dropStalled(now: now)
                resumeFinished()
            }
            engine.runningCount.store(running.count, ordering: .relaxed)
            poll()
        }
        engine.lanes.stopWaiting(loop: engine.index)
        idle.removeAll()
    }

    // MARK: - Inbox

    /// Takes what other threads posted; returns whether shutdown was asked.
    private func takeInbox() -> Bool {
        // Swap buffers instead of copying: the inbox gets the emptied array of last turn, so
        // neither side allocates on a steady stream of requests.
        var cancelledIDs: [UInt64] = []
        var expected: [CurlEngine.Expected] = []
        let (isCancellingAll, isShuttingDown) = engine.inbox.withLock { inbox in
            swap(&inbox.pending, &spare)
            if !inbox.cancelled.isEmpty { swap(&inbox.cancelled, &cancelledIDs) }
            if !inbox.expected.isEmpty { swap(&inbox.expected, &expected) }
            inbox.isLoopPolling = false
            return (inbox.isCancellingAll, inbox.isShuttingDown)
        }
        waiting.append(contentsOf: spare)
        for pending in spare { waitingPerHost[pending.host, default: 0] += 1 }
        if probes.isEnabled {
            for pending in spare {
                probes.met(pending.host, request: pending.request, hostFailureLimit: pending.hostFailureLimit)
            }
            for announced in expected {
                probes.met(
                    announced.host, request: announced.request, hostFailureLimit: announced.hostFailureLimit,
                    distant: announced.isDistant)
            }
        }
        spare.removeAll(keepingCapacity: true)
        let interrupted = TransferResponse(failure: FetchFailure(.interrupted, "transfer cancelled"))
        if isCancellingAll {
            for host in probes.cancelAll(on: engine.multi) { scheduler.setProbing(host, false) }
            for transfer in Array(running.values) { finish(transfer, with: interrupted) }
            for pending in waiting[waitingStart...] { finished.append((pending.continuation, interrupted)) }
            waiting.removeAll()
            waitingPerHost.removeAll()
            waitingStart = 0
            for pending in scheduler.removeHeld(where: { _ in true }) {
                finished.append((pending.continuation, interrupted))
            }
        } else if !cancelledIDs.isEmpty {
            let cancelled = Set(cancelledIDs)
            for pending in scheduler.removeHeld(where: { cancelled.contains($0.id) }) {
                finished.append((pending.continuation, interrupted))
            }
            for id in cancelled {
                if let transfer = running[id] { finish(transfer, with: interrupted) }
            }
            waiting = waiting[waitingStart...].filter { pending in
                guard cancelled.contains(pending.id) else { return true }
                leftWaiting(pending.host)
                finished.append((pending.continuation, interrupted))
                return false
            }
            waitingStart = 0
        }
        resumeFinished()
        return isShuttingDown
    }

    /// Blocks in `curl_multi_poll` unless there is work to do right now.
    private func poll() {
        let isHeldDue = hasHeld && scheduler.nanosecondsUntilNextStart(now: MonotonicTime.nanoseconds()) == 0
        if hasWaiting || isHeldDue {
            // Requests to start: now if a lane is free, else once another loop frees one.
            // Marked as waiting until they have started, awake or not: the other loop
            // keeps to its share meanwhile.
            guard engine.lanes.waitForLane(loop: engine.index, running: running.count) else { return }
        } else {
            engine.lanes.stopWaiting(loop: engine.index)
        }
        let mayPoll = engine.inbox.withLock { inbox in
            // The cancel-all and shutdown flags stay set once raised; their wakeup is never lost
            // (curl keeps it pending until the next poll), so they need not keep the loop awake.
            guard inbox.pending.isEmpty, inbox.cancelled.isEmpty else { return false }
            inbox.isLoopPolling = true
            return true
        }
        guard mayPoll else { return }
        var timeout = running.isEmpty ? Self.idlePollMilliseconds : Int32(Self.stallCheckInterval / 1_000_000)
        // A held request whose wait ends, or a paused transfer whose bytes are earned, must
        // not wait for an unrelated wake-up.
        let now = MonotonicTime.nanoseconds()
        for due in [scheduler.nanosecondsUntilNextStart(now: now), rateLimiter?.nanosecondsUntilResumable()] {
            guard let due else { continue }
            timeout = min(timeout, Int32(clamping: (due + 999_999) / 1_000_000))
        }
        curl_multi_poll(engine.multi, nil, 0, timeout, nil)
    }

    // MARK: - Transfers

    private func startWaiting() {
        let now = hasWaiting || hasHeld ? MonotonicTime.nanoseconds() : 0
        // Again while some start: a request to a host that is down ends at once in `start`,
        // freeing its host's place for the next one held.
        while hasHeld {
            let lanes = engine.lanes.take(upTo: lanesAvailable, for: engine.index, running: running.count)
            let startable = scheduler.takeStartable(now: now, capacity: lanes)
            engine.lanes.release(lanes - startable.count, from: engine.index)
            if startable.isEmpty { break }
            for held in startable { start(held.pending, host: held.host, now: now) }
        }
        while hasWaiting, engine.lanes.take(upTo: 1, for: engine.index, running: running.count) == 1 {
            let pending = waiting[waitingStart]
            waitingStart += 1
            let host = pending.host
            leftWaiting(host)
            // A host's requests start in arrival order: none passes one already held.
            guard !scheduler.hasHeld(for: host), scheduler.mayStart(host, now: now) else {
                engine.lanes.release(from: engine.index)
                scheduler.hold(pending, host: host)
                continue
            }
            scheduler.started(host)
            start(pending, host: host, now: now)
        }
        // Compact the consumed front now and then instead of shifting on every start.
        if waitingStart > 1024, waitingStart * 2 > waiting.count {
            waiting.removeFirst(waitingStart)
            waitingStart = 0
        } else if !hasWaiting, waitingStart > 0 {
            waiting.removeAll(keepingCapacity: true)
            waitingStart = 0
        }
    }

    private func leftWaiting(_ host: String) {
        guard let count = waitingPerHost[host], count > 1 else {
            waitingPerHost[host] = nil
            return
        }
        waitingPerHost[host] = count - 1
    }

    /// Starts one request (already counted by the scheduler, its lane taken), unless its
    /// host is down.
    private func start(_ pending: CurlEngine.Pending, host: String, now: UInt64) {
        if engine.hostHealth.isDown(host, limit: pending.hostFailureLimit) {
            engine.lanes.release(from: engine.index)
            scheduler.finished(host, wasSent: false, now: now)
            finished.append((pending.continuation, TransferResponse(failure: engine.hostHealth.failure(for: host))))
            return
        }
        probes.didStart(host)
        guard let transfer = idle.popLast() ?? CurlTransfer(openSockets: engine.openSockets) else {
            engine.lanes.release(from: engine.index)
            scheduler.finished(host, wasSent: false, now: now)
            let failure = FetchFailure(.io, "curl_easy_init failed")
            finished.append((pending.continuation, TransferResponse(failure: failure)))
            return
        }
        transfer.arm(
            id: pending.id, request: pending.request, hostFailureLimit: pending.hostFailureLimit, host: host,
            continuation: pending.continuation, now: now)
        transfer.rateLimiter = rateLimiter
        transfer.sockets = sockets
        transfer.sendLog = sendLog
        if hasIdleConnectionsToSpare, waitingPerHost[host] == nil, !scheduler.hasHeld(for: host),
            !pending.request.url.hasPrefix("https:")
        {
            transfer.closesConnectionWhenDone()
        }
        running[pending.id] = transfer
        curl_multi_add_handle(engine.multi, transfer.handle)
    }

    /// Whether a connection whose host has no other request waiting is closed when its
    /// transfer ends rather than kept idle: while at least half of this loop's share of `-j`
    /// (``TransferLanes/fairShare``) is running and its curl holds more connections than
    /// that share. libcurl (7.88) finds the oldest idle connection to close by walking every
    /// connection it holds, once per new connection while its cache is full; on a list of many hosts most idle connections are
    /// never used again, and that walk took a sixth of the loop thread
    /// (<doc:Fetching#Connections>). A host's later URL opens a new connection. A run with
    /// few transfers in flight (a slow producer, `-j 1`) or few hosts keeps every connection,
    /// and so does every HTTPS transfer: a new TLS connection costs libcurl 7.88 an
    /// `SSL_CTX` and a full handshake, about a millisecond of the loop thread, where the walk
    /// costs microseconds; on the bench's web-like list the HTTPS names with two or three
    /// URLs made a connection per URL (`Scripts/bench.d/README.md`, "A warm re-run, and CPU
    /// per URL").
    private var hasIdleConnectionsToSpare: Bool {
        let share = engine.lanes.fairShare
        return running.count * 2 >= share && engine.openSockets.value > share
    }

    /// Opens connections to hosts met in the queue whose turn has not come (``HostProbes``).
    /// Only while `-j` is full: with a slot free, a host met ahead of its turn has its first
    /// request on the way (the run announces lines whose fetches are still being started),
    /// and a probe would be one connection more than the request itself opens.
    private func launchProbes() {
        guard probes.isEnabled, engine.lanes.isFull || hasWaiting else { return }
        let hostHealth = engine.hostHealth
        for host in probes.launch(on: engine.multi, skipping: { hostHealth.isDown($0, limit: $1) }) {
            scheduler.setProbing(host, true)
        }
    }

    /// Hands the sends noted during `curl_multi_perform` to the scheduler.
    private func noteSends() {
        guard !sendLog.entries.isEmpty else { return }
        for entry in sendLog.entries {
            scheduler.sent(entry.host, at: entry.time, firstForTransfer: entry.firstForTransfer)
        }
        sendLog.removeAll()
    }

    /// Resumes transfers paused by `--limit-rate` once the bucket holds their next chunk.
    /// `curl_easy_pause` may deliver the held bytes at once, pausing the transfer again.
    private func resumeRateLimited() {
        guard let rateLimiter else { return }
        rateLimiter.refill(now: MonotonicTime.nanoseconds())
        for id in rateLimiter.takeResumable() {
            guard let transfer = running[id], transfer.isPausedForRate else { continue }
            transfer.isPausedForRate = false
            curl_easy_pause(transfer.handle, 0)  // CURLPAUSE_CONT: a compound macro Swift does not import
        }
    }

    private func collectDone() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(engine.multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            if let probe = probes.finish(handle, code: code, on: engine.multi) {
                if let failure = probe.timedOut {
                    engine.hostHealth.record(
                        probe.host, url: "", reachedServer: false, answered: false, failure: failure,
                        limit: probe.limit)
                }
                scheduler.setProbing(probe.host, false)
                continue
            }
            var context: UnsafeMutableRawPointer?
            _ = CSDFetch_curl_easy_getinfo_pointer(handle, CURLINFO_PRIVATE, &context)
            let transfer = CurlTransfer.from(userData: context)
            finish(transfer, with: transfer.response(code: code))
        }
    }

    /// Ends transfers that received no byte for their `--timeout`, or too few over a
    /// window of their ``LowSpeedLimit`` (<doc:Fetching#Retries-and-timeouts>).
    ///
    /// Activity is sampled here, once per check: a stall is reported at most one check
    /// interval late, never early.
    private func dropStalled(now: UInt64) {
        var stalled: [CurlTransfer] = []
        var tooSlow: [(CurlTransfer, LowSpeedLimit)] = []
        for transfer in running.values {
            if let limit = transfer.request.lowSpeed, transfer.isTooSlow(under: limit, now: now) {
                tooSlow.append((transfer, limit))
                continue
            }
            if transfer.hasNewBytes || transfer.isPausedForRate {
                transfer.hasNewBytes = false
                transfer.lastActivity = now
            } else if now &- transfer.lastActivity > transfer.timeoutNanoseconds {
                // Bytes of a head still being dripped reach no callback until a line is whole.
                if let quiet = sockets.millisecondsSinceReceive(
                    localPort: transfer.localPort, remotePort: transfer.remotePort),
                    quiet * 1_000_000 < transfer.timeoutNanoseconds
                {
                    transfer.lastActivity = now &- quiet * 1_000_000
                    continue
                }
                stalled.append(transfer)
            }
        }
        for transfer in stalled { finish(transfer, with: transfer.stalledResponse()) }
        for (transfer, limit) in tooSlow { finish(transfer, with: transfer.tooSlowResponse(under: limit)) }
    }

    /// Detaches a transfer, records its host's health, queues its caller's resumption
    /// and keeps its handle for reuse.
    private func finish(_ transfer: CurlTransfer, with response: TransferResponse) {
        curl_multi_remove_handle(engine.multi, transfer.handle)
        running[transfer.id] = nil
        engine.lanes.release(from: engine.index)
        noteSends()
        let now = MonotonicTime.nanoseconds()
        if transfer.isMultiplexed { scheduler.multiplexes(transfer.host) }
        if let pause = Self.pause(asked: response, cap: engine.pacing.retryAfterCap) {
            scheduler.pause(transfer.host, until: now &+ pause)
        }
        scheduler.finished(transfer.host, wasSent: transfer.isConnected, now: now)
        // The host answered: its response came to an end (or it redirected), not cut by a
        // timeout. Only answers make a host slow: a silent one is not "slow", it is down.
        let answered =
            response.redirectCount > 0
            || (transfer.isConnected && transfer.receivedBytes
                && ![.timeout, .interrupted].contains(response.failure?.kind))
        if answered { engine.hostHealth.recordDuration(transfer.host, nanoseconds: now &- transfer.startedAt) }
        rateLimiter?.forget(transfer.id)
        if transfer.hostFailureLimit > 0 {
            // Local exhaustion (`io`: EMFILE, ENOMEM) says nothing about the host.
            let failure = response.failure.flatMap { $0.kind != .interrupted && $0.kind != .io ? $0 : nil }
            engine.hostHealth.record(
                transfer.host, url: transfer.request.url, reachedServer: transfer.isConnected, answered: answered,
                failure: failure, refusal: response.refusal, limit: transfer.hostFailureLimit)
        }
        guard let continuation = transfer.continuation else { preconditionFailure("running transfer without caller") }
        finished.append((continuation, response))
        transfer.recycle()
        if idle.count < engine.maxTransfers { idle.append(transfer) }
    }

    /// Nanoseconds a `429` or `503` with `Retry-After` asks its host to rest, up to `cap`;
    /// nil for any other response. The URL's own retry waits as long in the fetcher.
    private static func pause(asked response: TransferResponse, cap: Duration) -> UInt64? {
        guard response.httpStatus == 429 || response.httpStatus == 503, let seconds = response.retryAfter,
            seconds.isFinite, seconds > 0
        else { return nil }
        let capped = min(seconds, cap.timeInterval)
        return UInt64(capped * 1_000_000_000)
    }

    /// Resumes finished callers outside any lock, in one batch.
    private func resumeFinished() {
        guard !finished.isEmpty else { return }
        for (continuation, response) in finished { continuation.resume(returning: response) }
        finished.removeAll(keepingCapacity: true)
    }
}
