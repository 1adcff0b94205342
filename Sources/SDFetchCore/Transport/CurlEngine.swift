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
/// `@unchecked Sendable`: `multi` and every ``CurlTransfer`` are touched only by the loop
/// thread; other threads talk to it through `inbox` (guarded by its `Mutex`) and
/// `curl_multi_wakeup`, which libcurl documents as thread-safe. At most `maxTransfers`
/// transfers run at once; the rest wait in arrival order.
public final class CurlEngine: @unchecked Sendable {
    private struct Pending: Sendable {
        let id: UInt64
        let request: TransferRequest
        let continuation: CheckedContinuation<TransferResponse, Never>
    }

    private struct Inbox: Sendable {
        var pending: [Pending] = []
        var cancelled: Set<UInt64> = []
        var cancelAll = false
        var shutdown = false
        var nextID: UInt64 = 0
    }

    public let maxTransfers: Int
    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private let stopped = Atomic<Bool>(false)

    /// Starts the loop thread. `maxTransfers` is `-j`.
    public init(maxTransfers: Int) {
        _ = curlGlobalInit
        guard let multi = curl_multi_init() else { preconditionFailure("curl_multi_init failed: out of memory") }
        self.multi = multi
        self.maxTransfers = max(1, maxTransfers)
        _ = CSDFetch_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, self.maxTransfers)
        _ = CSDFetch_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, self.maxTransfers)
        let thread = Thread { [self] in runLoop() }
        thread.name = "sdfetch-curl"
        thread.start()
    }

    deinit {
        curl_multi_cleanup(multi)
    }

    /// Performs one transfer. Cancelling the calling task drops the transfer and returns
    /// an `interrupted` failure.
    public func perform(_ request: TransferRequest) async -> TransferResponse {
        let id = inbox.withLock { inbox in
            inbox.nextID += 1
            return inbox.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let accepted = inbox.withLock { inbox in
                    guard !inbox.shutdown, !inbox.cancelAll else { return false }
                    inbox.pending.append(Pending(id: id, request: request, continuation: continuation))
                    return true
                }
                if accepted {
                    curl_multi_wakeup(multi)
                } else {
                    continuation.resume(returning: TransferResponse(failure: FetchFailure(.interrupted, "stopped")))
                }
            }
        } onCancel: {
            inbox.withLock { _ = $0.cancelled.insert(id) }
            curl_multi_wakeup(multi)
        }
    }

    /// Ends every transfer, queued or running, with `interrupted` (Ctrl-C), and refuses new ones.
    public func cancelAll() {
        inbox.withLock { $0.cancelAll = true }
        curl_multi_wakeup(multi)
    }

    /// Stops the loop thread once in-flight transfers are done. Waits for it.
    public func shutdown() {
        inbox.withLock { $0.shutdown = true }
        curl_multi_wakeup(multi)
        while !stopped.load(ordering: .acquiring) { usleep(1000) }
    }

    // MARK: - Loop thread

    private func runLoop() {
        var running: [UInt64: CurlTransfer] = [:]
        var byHandle: [UnsafeMutableRawPointer: UInt64] = [:]
        var waiting: [Pending] = []
        var waitingStart = 0

        func finish(_ transfer: CurlTransfer, with response: TransferResponse) {
            curl_multi_remove_handle(multi, transfer.handle)
            running[transfer.id] = nil
            byHandle[transfer.handle] = nil
            transfer.continuation.resume(returning: response)
        }

        while true {
            let (incoming, cancelled, cancelAll, shutdown) = inbox.withLock { inbox in
                defer {
                    inbox.pending.removeAll(keepingCapacity: true)
                    inbox.cancelled.removeAll(keepingCapacity: true)
                }
                return (inbox.pending, inbox.cancelled, inbox.cancelAll, inbox.shutdown)
            }
            waiting.append(contentsOf: incoming)

            let interrupted = TransferResponse(failure: FetchFailure(.interrupted, "transfer cancelled"))
            if cancelAll {
                for transfer in Array(running.values) { finish(transfer, with: interrupted) }
                for pending in waiting[waitingStart...] { pending.continuation.resume(returning: interrupted) }
                waiting.removeAll()
                waitingStart = 0
            } else if !cancelled.isEmpty {
                for id in cancelled {
                    if let transfer = running[id] { finish(transfer, with: interrupted) }
                }
                let remaining = waiting[waitingStart...].filter { pending in
                    guard cancelled.contains(pending.id) else { return true }
                    pending.continuation.resume(returning: interrupted)
                    return false
                }
                waiting = Array(remaining)
                waitingStart = 0
            }

            while running.count < maxTransfers, waitingStart < waiting.count {
                let pending = waiting[waitingStart]
                waitingStart += 1
                guard let transfer = CurlTransfer(id: pending.id, request: pending.request, continuation: pending.continuation) else {
                    pending.continuation.resume(returning: TransferResponse(failure: FetchFailure(.io, "curl_easy_init failed")))
                    continue
                }
                running[pending.id] = transfer
                byHandle[transfer.handle] = pending.id
                curl_multi_add_handle(multi, transfer.handle)
            }
            if waitingStart > 1024, waitingStart * 2 > waiting.count {
                waiting.removeFirst(waitingStart)
                waitingStart = 0
            }

            if shutdown && running.isEmpty && waitingStart >= waiting.count { break }

            var stillRunning: Int32 = 0
            curl_multi_perform(multi, &stillRunning)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                    let id = byHandle[handle], let transfer = running[id]
                else { continue }
                let code = message.pointee.data.result
                finish(transfer, with: transfer.response(code: code))
            }
            // Wait for sockets, curl's own timers or a wakeup, unless a finished transfer
            // just freed a slot that a waiting one can take.
            let canStartMore = running.count < maxTransfers && waitingStart < waiting.count
            if !canStartMore { curl_multi_poll(multi, nil, 0, 1000, nil) }
        }
        stopped.store(true, ordering: .releasing)
    }
}
