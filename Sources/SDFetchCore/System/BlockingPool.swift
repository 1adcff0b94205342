import FoundationEssentials
import Glibc

/// A few threads of its own for work that may wait on another process or on a reader: a
/// replaced entry's store when its bucket's lock is held elsewhere and the blacklist's
/// record writes (the fetcher's `sdfetch-files` pool), the console's writes to a pipe (the
/// CLI's one-thread pool), and the once-per-command steps (``BlockingWork``).
///
/// Why: the cooperative pool has one thread per core (two here). A task parked in `flock`
/// (a `clean` elsewhere holds a bucket's lock for up to 256 removals) or in a `write` to a
/// full pipe holds one of them, and with every one parked nothing else runs: no transfer
/// result, no progress bar, no drain after Ctrl-C. Such work is submitted here and the task
/// awaits its result, as with swift-nio's `NIOThreadPool`.
///
/// Jobs start in submission order; with one thread they also end in that order, which the
/// console's writer relies on. A hop costs a parked thread's wake-up and a continuation's
/// resume, six context switches per URL when every download took one, so what meets only
/// the page cache stays on its task: the store step's writes, the `-o` copies and the warm
/// hit's `fstatat` (SDFetchCore.docc, Pipeline, "System calls left on the tasks"). A store
/// first tries its lock without waiting and comes here only when the lock is held.
///
/// Lifetime: ``shutdown()`` lets the queued jobs run, ends the threads and returns once the
/// last has ended; ``withBlockingPool(threads:name:isolation:_:)`` calls it on every exit,
/// and `deinit` asserts it ran, in the manner of swift-nio's event loops.
package final class BlockingPool: Sendable {
    private let queue: JobQueue
    private let name: String

    /// A pool of at most `threads` threads named `name`, each started when a job finds no
    /// idle one: a run that never blocks starts none.
    package init(threads: Int, name: String) {
        precondition(threads > 0, "a pool needs a thread")
        queue = JobQueue(limit: threads)
        self.name = name
    }

    private func startThread() {
        let queue = self.queue  // the threads hold the queue, never the pool, so deinit can check
        DedicatedThread.start(name: name) {
            while let job = queue.next() { job() }
            queue.threadDidEnd()
        }
    }

    deinit {
        assert(queue.isShutDown, "a BlockingPool released without shutdown(): its threads wait forever")
    }

    /// Queues `job` and returns at once; for work nobody waits for (the console's writes).
    package func submit(_ job: @escaping @Sendable () -> Void) {
        if queue.append(job) { startThread() }
    }

    /// Runs `work` on one of the pool's threads and returns its result. The calling task is
    /// suspended, not blocked; cancellation does not stop a job once submitted (a store is
    /// never left half done).
    package func run<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: Result { () throws(E) in try work() }) }
        }
        return try result.get()
    }

    /// Runs the jobs already queued, ends the threads, and returns once they have ended.
    package func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.shutDown(resuming: continuation)
        }
    }
}

/// Runs `body` with a new ``BlockingPool`` of `threads` threads and shuts it down when
/// `body` ends, however it ends: the threads live exactly as long as the scope.
package func withBlockingPool<T, E: Error>(
    threads: Int, name: String, isolation: isolated (any Actor)? = #isolation,
    _ body: (BlockingPool) async throws(E) -> T
) async throws(E) -> T {
    try await withLifetime(of: BlockingPool(threads: threads, name: name), end: { await $0.shutdown() }, body)
}

// MARK: - The queue

/// The pool's jobs and its threads' bookkeeping, shared by the submitters and the threads.
///
/// `@unchecked Sendable`: every stored property below `condition` is read and written only
/// while `condition` is locked. A condition variable, not a `Mutex`: the threads must sleep
/// until a job arrives, and ThreadSanitizer sees a pthread lock as the ordering between a
/// submitter's writes and the job that reads them (it does not model `Mutex`'s futex).
private final class JobQueue: @unchecked Sendable {
    private let condition = ConditionLock()
    /// Queued jobs; `jobs[head...]` are waiting, the prefix is spent (compacted now and then).
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    private var isShuttingDown = false
    /// At most this many threads.
    private let limit: Int
    /// Threads started and not yet ended; those of them waiting for a job.
    private var running = 0
    private var idle = 0
    /// ``BlockingPool/shutdown()`` callers waiting for the last thread to end.
    private var shutdownWaiters: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) {
        self.limit = limit
    }

    /// Queues `job`; true when the caller must start a thread for it (none idle, room for one).
    func append(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.withLock {
            precondition(!isShuttingDown, "a job submitted to a BlockingPool after its shutdown")
            jobs.append(job)
            // Jobs already queued each have an idle thread on its way, or none at all.
            if idle > jobs.count - head - 1 {
                condition.signal()
                return false
            }
            guard running < limit else { return false }
            running += 1
            return true
        }
    }

    /// The next job, waiting for one; nil once the pool shuts down and nothing is queued.
    func next() -> (@Sendable () -> Void)? {
        condition.withLock {
            while head == jobs.count && !isShuttingDown {
                idle += 1
                condition.wait()
                idle -= 1
            }
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 && head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    func threadDidEnd() {
        let waiters = condition.withLock { () -> [CheckedContinuation<Void, Never>] in
            running -= 1
            guard running == 0 else { return [] }
            defer { shutdownWaiters = [] }
            return shutdownWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func shutDown(resuming waiter: CheckedContinuation<Void, Never>) {
        let isDone = condition.withLock { () -> Bool in
            isShuttingDown = true
            condition.broadcast()
            if running > 0 { shutdownWaiters.append(waiter) }
            return running == 0
        }
        if isDone { waiter.resume() }
    }

    var isShutDown: Bool { condition.withLock { isShuttingDown && running == 0 } }
}
