import Synchronization

/// Where a run's results become final: the one owner of the ``RunSummary`` and the queue
/// of events the consumer takes.
///
/// Whoever finishes a result publishes it here: the intake its warm hits (a batch at a
/// time), each network child task its own result, right after the result's last step
/// (``ResultDelivery``). Publishing counts the status, once, for the summary and the bar
/// (``RunProgress``), gives the result its key's duplicates so far and queues it, all under
/// one lock: a status is final when it is queued, and a result queued after
/// ``FetchEvent/inputFinished(duplicates:)`` carries its key's final count.
///
/// The consumer awaits ``next()``, which hands over everything queued at once (a warm
/// run's results arrive in batches of hundreds, a cold run's one by one, and either costs
/// one wake-up per hand-off). Memory stays bounded: the intake, the only source of new
/// work, awaits ``waitForRoom()`` before each input batch, so a slow consumer (a blocked
/// stdout) holds the input back; the network children never wait here, and at most the
/// run's slots of them are under way.
final class RunLedger: Sendable {
    private struct State {
        var summary = RunSummary()
        /// Further occurrences per key met more than once: grows with duplicated keys only.
        var duplicateCounts: [KeyDigest: Int] = [:]
        /// Events for the consumer, oldest first; results published since the last other
        /// event wait in `results` and join them when one comes or the consumer takes.
        var queued: [FetchEvent] = []
        var results: [FetchResult] = []
        /// Results queued in all, for the room bound.
        var queuedResults = 0
        var consumer: CheckedContinuation<[FetchEvent]?, Never>?
        var intake: CheckedContinuation<Void, Never>?
        var isClosed = false
    }

    /// Results queued past which the intake waits for the consumer: two input batches. More
    /// let the intake, split over every core, run ahead of the one consumer, and a warm run
    /// then ends on the consumer's backlog alone (4,096 cost some 8 ms of a 0.17 s warm run
    /// of 20,000 URLs, with the same CPU time).
    static let room = 1024

    let progress: RunProgress
    private let state = Mutex(State())

    init(progress: RunProgress) {
        self.progress = progress
    }

    // MARK: - Publishing (the intake and the network children)

    /// Counts and queues `results`, each final: its last step has run.
    func publish(_ results: [FetchResult]) {
        guard !results.isEmpty else { return }
        let consumer = state.withLock { state in
            for result in results {
                Self.count(result, into: &state.summary)
                progress.completed(result)
            }
            state.queuedResults += results.count
            if state.duplicateCounts.isEmpty && state.results.isEmpty {
                state.results = results  // no count to set: the batch's own storage, no copy
            } else {
                for var result in results {
                    if let digest = result.key?.digest { result.duplicates = state.duplicateCounts[digest] ?? 0 }
                    state.results.append(result)
                }
            }
            return Self.handOff(&state)
        }
        consumer?()
    }

    /// Repeats of keys already met, counted before the results of their batch are published;
    /// `rows`: those of them that are tabular rows, queued for the consumer to give each its
    /// own line (``FetchEvent/repeatedRows(_:)``).
    func noteDuplicates(_ digests: [KeyDigest], rows: [RepeatedRow] = []) {
        guard !digests.isEmpty else { return }
        let consumer = state.withLock { state -> (() -> Void)? in
            state.summary.duplicates += digests.count
            for digest in digests { state.duplicateCounts[digest, default: 0] += 1 }
            guard !rows.isEmpty else { return nil }
            // Rows take room like results: a slow consumer holds the input back.
            state.queuedResults += rows.count
            Self.append(.repeatedRows(rows), to: &state)
            return Self.handOff(&state)
        }
        consumer?()
    }

    /// An input source could not be read.
    func unreadable(source: String, detail: String) {
        enqueue(.unreadableInput(source: source, detail: detail)) { $0.unreadableInputs += 1 }
    }

    /// Every input line was read: the duplicate counts are final from now on.
    func inputDidFinish() {
        progress.inputDidFinish()
        let consumer = state.withLock { state in
            Self.append(.inputFinished(duplicates: state.duplicateCounts), to: &state)
            return Self.handOff(&state)
        }
        consumer?()
    }

    /// Every result was published: queues the summary, with the run's `usedKeys`, and ends
    /// the events once the consumer took it.
    func finish(usedKeys: KeyDigestSet) {
        let (requests, bytes) = progress.sentAndReceived
        enqueue(nil) { summary in
            summary.usedKeys = usedKeys
            summary.requests = requests
            summary.receivedBytes = bytes
        }
    }

    // MARK: - Consuming (the run's task)

    /// Everything queued since the last call, waiting while nothing is; nil after the last.
    func next() async -> [FetchEvent]? {
        await withCheckedContinuation { continuation in
            let handOff = state.withLock { state -> (() -> Void)? in
                state.consumer = continuation
                let hasEvents = !state.queued.isEmpty || !state.results.isEmpty || state.isClosed
                return hasEvents ? Self.handOff(&state) : nil
            }
            handOff?()
        }
    }

    /// Returns once fewer than ``room`` results wait for the consumer.
    func waitForRoom() async {
        await withCheckedContinuation { continuation in
            let hasRoom = state.withLock { state in
                guard state.queuedResults >= Self.room else { return true }
                state.intake = continuation
                return false
            }
            if hasRoom { continuation.resume() }
        }
    }

    // MARK: - Under the lock

    /// Queues `event` (nil: the summary, and the end) after `change` to the summary.
    private func enqueue(_ event: FetchEvent?, _ change: (inout RunSummary) -> Void) {
        let consumer = state.withLock { state in
            change(&state.summary)
            if let event {
                Self.append(event, to: &state)
            } else {
                Self.append(.finished(state.summary), to: &state)
                state.isClosed = true
            }
            return Self.handOff(&state)
        }
        consumer?()
    }

    /// Everything queued, taken for a waiting consumer, and the intake's wait for room
    /// ended with it: the resumptions, to run outside the lock. Nil after the last event.
    private static func handOff(_ state: inout State) -> (() -> Void)? {
        guard let consumer = state.consumer else { return nil }
        state.consumer = nil
        if !state.results.isEmpty { append(nil, to: &state) }
        let events: [FetchEvent]? = state.queued.isEmpty && state.isClosed ? nil : state.queued
        state.queued = []
        state.queuedResults = 0
        let intake = state.intake
        state.intake = nil
        return {
            consumer.resume(returning: events)
            intake?.resume()
        }
    }

    /// Appends `event` after the results published before it (nil: the results alone).
    private static func append(_ event: FetchEvent?, to state: inout State) {
        if !state.results.isEmpty {
            state.queued.append(.results(state.results))
            state.results = []
        }
        if let event { state.queued.append(event) }
    }

    /// A result's count in the summary; an interrupted URL is counted apart, not as `failed`.
    private static func count(_ result: FetchResult, into summary: inout RunSummary) {
        if let kind = result.failure?.kind, result.status == .failed { summary.errorKinds[kind, default: 0] += 1 }
        if result.failure?.kind == .interrupted {
            summary.wasInterrupted = true
            summary.interrupted += 1
        } else {
            summary.counts[result.status, default: 0] += 1
        }
        if result.status == .downloaded { summary.downloadedBytes += result.bytes }
    }
}
