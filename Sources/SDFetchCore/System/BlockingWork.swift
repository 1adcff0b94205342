import Foundation

/// Work that may wait on another process (the cache's maintenance `flock` while a `clean`
/// runs elsewhere) or walk a whole cache, run on a thread of its own so it never parks one
/// of the cooperative pool's few threads.
///
/// A thread per call: the callers are once-per-command steps (`clean`, `verify`, `merge`,
/// `stats`, the end-of-run trim), where a thread's start costs nothing next to the work.
package enum BlockingWork {
    /// Runs `work` on a new thread named `name` and returns its result.
    package static func run<T: Sendable>(_ name: String, _ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: work()) }
            thread.name = name
            thread.start()
        }
    }

    /// ``run(_:_:)`` for work that throws `E`.
    package static func run<T: Sendable, E: Error>(
        _ name: String, throwing work: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        try await run(name) { Result { () throws(E) in try work() } }.get()
    }
}
