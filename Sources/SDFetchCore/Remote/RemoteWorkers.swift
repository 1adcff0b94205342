/// The remote tier's threads: each owns one connection per remote (``RemoteConnection``,
/// kept alive, never shared) and runs jobs that block on them.
///
/// Threads, not tasks: a request blocks in `curl_easy_perform` (or hiredis) for up to its
/// timeout, and the cooperative pool has one thread per core. Lookups go before uploads,
/// so a cold run's uploads never hold up the next URL's lookup.
///
/// Lifetime: ``finish(within:)`` lets the queued uploads run for at most its bound, drops
/// the rest and lets the threads end; a thread still in a request ends when the request's
/// own timeout does.
final class RemoteWorkers: Sendable {
    typealias Job = @Sendable ([any RemoteConnection]) -> Void

    private let queue = RemoteJobQueue()

    /// `threads` threads, started now, each connecting to every one of `remotes` once.
    init(threads: Int, remotes: [any RemoteCache]) {
        for index in 0..<threads {
            let queue = self.queue
            DedicatedThread.start(name: "sdfetch-remote\(index)") {
                let connections = remotes.map { $0.connect() }
                while let job = queue.next() { job(connections) }
            }
        }
    }

    /// Runs `work` on a worker thread, before any queued upload, and returns its result.
    func lookup<T: Sendable>(_ work: @escaping @Sendable ([any RemoteConnection]) -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.append(urgent: true) { continuation.resume(returning: work($0)) }
        }
    }

    /// Queues `job` behind the lookups; returns the number of uploads now waiting or running.
    @discardableResult
    func upload(_ job: @escaping Job) -> Int {
        queue.append(urgent: false, job)
    }

    /// Uploads waiting or running.
    var pendingUploads: Int { queue.pendingBackground }

    /// Waits until every queued job has run, or `bound` has passed (then the uploads not
    /// started are dropped), and lets the threads end.
    func finish(within bound: Duration) async {
        let timer = Task { [queue] in
            guard (try? await Task.sleep(for: bound)) != nil else { return }  // cancelled: drained in time
            queue.abandon()
        }
        await withCheckedContinuation { queue.whenDrained($0) }
        timer.cancel()
        queue.close()
    }
}

/// The workers' jobs and bookkeeping.
///
/// `@unchecked Sendable`: every stored property below `condition` is read and written only
/// while `condition` is locked (a condition variable: the threads sleep until a job comes).
private final class RemoteJobQueue: @unchecked Sendable {
    private let condition = ConditionLock()
    private var urgent: [RemoteWorkers.Job] = []
    private var background: [RemoteWorkers.Job] = []
    /// Background jobs running now.
    private var runningBackground = 0
    /// Jobs running now, of either kind.
    private var running = 0
    private var isClosed = false
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []

    /// Queues `job`; returns the background jobs waiting or running.
    @discardableResult
    func append(urgent isUrgent: Bool, _ job: @escaping RemoteWorkers.Job) -> Int {
        condition.withLock {
            if isUrgent { urgent.append(job) } else { background.append(job) }
            condition.signal()
            return background.count + runningBackground
        }
    }

    var pendingBackground: Int { condition.withLock { background.count + runningBackground } }

    /// The next job, waiting for one, counted as running until it returns; nil once closed
    /// with nothing queued.
    func next() -> RemoteWorkers.Job? {
        let job: (RemoteWorkers.Job, isBackground: Bool)? = condition.withLock {
            while urgent.isEmpty && background.isEmpty && !isClosed { condition.wait() }
            if !urgent.isEmpty {
                running += 1
                return (urgent.removeFirst(), false)
            }
            guard !background.isEmpty else { return nil }
            running += 1
            runningBackground += 1
            return (background.removeFirst(), true)
        }
        guard let (job, isBackground) = job else { return nil }
        return { [self] connections in
            job(connections)
            done(isBackground: isBackground)
        }
    }

    private func done(isBackground: Bool) {
        let waiters = condition.withLock { () -> [CheckedContinuation<Void, Never>] in
            if isBackground { runningBackground -= 1 }
            running -= 1
            return takeWaitersIfDrained()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Resumes `waiter` once nothing is queued or running.
    func whenDrained(_ waiter: CheckedContinuation<Void, Never>) {
        let waiters = condition.withLock { () -> [CheckedContinuation<Void, Never>] in
            drainWaiters.append(waiter)
            return takeWaitersIfDrained()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Drops the background jobs not started and resumes the drain waiters now.
    func abandon() {
        let waiters = condition.withLock { () -> [CheckedContinuation<Void, Never>] in
            background.removeAll()
            defer { drainWaiters = [] }
            return drainWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Lets the threads end once the queue is empty.
    func close() {
        condition.withLock {
            isClosed = true
            condition.broadcast()
        }
    }

    /// Call with the lock held.
    private func takeWaitersIfDrained() -> [CheckedContinuation<Void, Never>] {
        guard urgent.isEmpty, background.isEmpty, running == 0 else { return [] }
        defer { drainWaiters = [] }
        return drainWaiters
    }
}
