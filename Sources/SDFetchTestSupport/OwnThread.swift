import Foundation

/// Runs `work` on a thread of its own and awaits its result without holding a cooperative
/// thread.
///
/// For the steps of a test whose timing is the point (send a signal the moment a state is
/// seen, time a child's exit): the cooperative pool has a thread per core, and the suites
/// running beside the test keep them busy, so a wait polled there measures the test
/// process, not the child (3.5 s for a child gone at once, on two cores).
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}
