import Foundation
import SDFetchCore
import SDFetchTestSupport
import Synchronization
import Testing

@testable import sdfetch

/// An end-of-run trim never waits for another process's maintenance (SDFetchCore.docc,
/// OnDiskFormat, "Locks"), and its blocking work runs on threads of its own, never on the
/// cooperative pool (Pipeline, "Where threads are"): with more trims than the pool has
/// threads and the maintenance lock held elsewhere, every trim returns, deferred, while the
/// lock is still held, and other tasks still run.
@Suite("blocking work off the cooperative pool", .timeLimit(.minutes(1)), .cleansUp)
struct BlockingWorkTests {
    let directory = TemporaryDirectory("blocking-work")

    @Test("end-of-run trims meeting a held maintenance lock return deferred, and the pool stays free")
    func trimsNeverWaitForMaintenance() async throws {
        let cache = try DiskCache(directory: directory.appending("cache"))
        // Another "process" (a second open file description) holds the maintenance lock.
        let holder = open(directory.appending("cache/locks/maintenance"), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(holder >= 0 && flock(holder, LOCK_EX) == 0)
        defer { close(holder) }
        // Should a trim wait for the lock (the regression this test is for), a watchdog
        // thread releases it, so the test fails instead of hanging.
        let released = FinishedCount()
        Thread {
            Thread.sleep(forTimeInterval: 20)
            released.value.store(1, ordering: .sequentiallyConsistent)
            flock(holder, LOCK_UN)
        }.start()
        let trims = ProcessInfo.processInfo.activeProcessorCount + 2
        let deferred = FinishedCount()

        try await withConsole(environment: .detached()) { console in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<trims {
                    group.addTask {
                        let report = await CacheLimit.enforce(
                            on: cache, maxBytes: 1 << 30, protecting: [], console: console)
                        if report?.wasDeferred == true { deferred.value.add(1, ordering: .relaxed) }
                    }
                }
                let answer = await Task.detached { 42 }.value
                #expect(answer == 42)
                try await group.waitForAll()
            }
        }
        #expect(
            released.value.load(ordering: .sequentiallyConsistent) == 0, "the trims waited for the maintenance lock")
        #expect(deferred.value.load(ordering: .relaxed) == trims)
    }
}

/// A counter the test's tasks and its watchdog thread share.
private final class FinishedCount: Sendable {
    let value = Atomic<Int>(0)
}
