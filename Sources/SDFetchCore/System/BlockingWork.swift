import FoundationEssentials

/// A once-per-command step that may wait on another process (the cache's maintenance
/// `flock` while a `clean` runs elsewhere) or walk a whole cache: run on a ``BlockingPool``
/// of one thread that lives for the call, so it never parks one of the cooperative pool's
/// few threads.
///
/// A pool per call: the callers are `clean`, `verify`, `merge`, `stats` and the end-of-run
/// trim, where a thread's start costs nothing next to the work, and the trim runs after the
/// run's own pool (the ``Fetcher``'s) has shut down.
package enum BlockingWork {
    /// Runs `work` on a thread named `name` and returns its result.
    package static func run<T: Sendable>(_ name: String, _ work: @escaping @Sendable () -> T) async -> T {
        await withBlockingPool(threads: 1, name: name) { pool in await pool.run(work) }
    }

    /// ``run(_:_:)`` for work that throws `E`.
    package static func run<T: Sendable, E: Error>(
        _ name: String, throwing work: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        try await run(name) { Result { () throws(E) in try work() } }.get()
    }
}
