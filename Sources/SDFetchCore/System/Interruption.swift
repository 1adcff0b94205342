import Synchronization

/// A one-way latch tripped by ``CurlEngine/cancelAll()``: after it, backoff sleeps end at
/// once, so Ctrl-C never waits out a `Retry-After` of 30 s.
///
/// Sleeping uses `Task.sleep`, so cancelling the sleeping task also ends the sleep early.
/// Thread-safe through its `Mutex`; waiters are continuations resumed outside the lock.
final class Interruption: Sendable {
    private struct State {
        var isTripped = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// The latch of the engine whose fetch is running on this task, set by the fetcher
    /// around a URL's network steps, so verification stops on Ctrl-C too.
    @TaskLocal static var current: Interruption?

    /// Whether the work running on this task should stop: its task was cancelled, or the
    /// run was interrupted (``current`` tripped). Asked by the walkers and decoders every
    /// few rows or blocks; synchronous, so a C callback on the verifying thread may ask it.
    static var isRequested: Bool {
        Task.isCancelled || (current?.isTripped ?? false)
    }

    init() {}

    var isTripped: Bool { state.withLock { $0.isTripped } }

    /// Backoff sleeps waiting on the latch right now: what a test waits for before it trips
    /// the latch, so it wakes a sleeper rather than a sleep not yet begun.
    var sleepers: Int { state.withLock { $0.waiters.count } }

    /// Trips the latch and wakes every sleeper. Idempotent.
    func trip() {
        let waiters = state.withLock { state in
            state.isTripped = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Sleeps for `duration`. Returns false when the latch tripped or the task was cancelled first.
    func sleep(for duration: Duration) async -> Bool {
        await unlessTripped { (try? await Task.sleep(for: duration)) != nil } ?? false
    }

    /// `work`'s result, or nil when the latch trips (or the task is cancelled) first; `work`
    /// is then cancelled, so it must end promptly on cancellation.
    func unlessTripped<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T? {
        guard !isTripped else { return nil }
        return await withTaskGroup(of: T?.self) { group in
            group.addTask { await work() }
            group.addTask {
                await self.waitUntilTripped()
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return isTripped ? nil : first
        }
    }

    /// Returns once tripped, or once the calling task is cancelled.
    private func waitUntilTripped() async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waitsHere = state.withLock { state in
                    guard !state.isTripped, !Task.isCancelled else { return false }
                    state.waiters[id] = continuation
                    return true
                }
                if !waitsHere { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
