import Glibc

/// A mutex with a condition variable (pthread's), for threads that sleep until another
/// thread changes shared state: the input reader waiting for room, the file threads for work.
///
/// Instead of Foundation's `NSCondition`, which links the full Foundation into the static
/// binary (see ``DedicatedThread``). ThreadSanitizer understands pthread locks, so the
/// ordering they give is visible to it. `@unchecked Sendable`: the two pthread objects live
/// at fixed heap addresses for the object's life and are only used through pthread calls,
/// which are thread-safe; what they guard is the caller's.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }

    func unlock() { pthread_mutex_unlock(mutex) }

    /// Releases the lock until ``signal()`` or ``broadcast()`` (or a spurious wake-up: check
    /// the state again), and holds it again on return. Call with the lock held.
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes one waiting thread.
    func signal() { pthread_cond_signal(condition) }

    /// Wakes every waiting thread.
    func broadcast() { pthread_cond_broadcast(condition) }

    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
