import Foundation
import SDFetchCore
import SDFetchTestSupport
import Synchronization
import Testing

@testable import sdfetch

/// Steps that wait on another process's lock do so on threads of their own, never on the
/// cooperative pool (SDFetchCore.docc, Pipeline, "Where threads are"): with more trims
/// waiting than the pool has threads, other tasks still run.
@Suite("blocking work off the cooperative pool", .timeLimit(.minutes(1)), .cleansUp)
struct BlockingWorkTests {
    let directory = TemporaryDirectory("blocking-work")

    @Test("end-of-run trims waiting on a held maintenance lock leave the cooperative pool free")
    func waitingTrimsDoNotParkThePool() async throws {
        let cache = try DiskCache(directory: directory.appending("cache"))
        // Another "process" (a second open file description) holds the maintenance lock.
        let holder = open(directory.appending("cache/locks/maintenance"), O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(holder >= 0 && flock(holder, LOCK_EX) == 0)
        defer { close(holder) }
        // Should the trims park the pool (the regression this test is for), this task could
        // never release the lock: a watchdog thread does, so the test fails instead of hanging.
        Thread {
            Thread.sleep(forTimeInterval: 20)
            flock(holder, LOCK_UN)
        }.start()
        let waiting = ProcessInfo.processInfo.activeProcessorCount + 2
        let finished = FinishedCount()

        try await withConsole(environment: .detached()) { console in try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<waiting {
                group.addTask {
                    await CacheLimit.enforce(on: cache, maxBytes: 1 << 30, protecting: [], console: console)
                    finished.value.add(1, ordering: .relaxed)
                }
            }
            // Give the trims time to reach the lock, then prove the pool still runs tasks while
            // they wait: parked threads would hold this task until the watchdog's release, and
            // the trims would have finished by the time it runs. No clock bound: on a loaded
            // machine the pool may be slow, but the lock stays held until released below.
            try await Task.sleep(for: .milliseconds(300))
            let answer = await Task.detached { 42 }.value
            #expect(answer == 42)
            #expect(finished.value.load(ordering: .relaxed) == 0, "the trims are still waiting for the lock")
            flock(holder, LOCK_UN)  // every trim now finishes
            try await group.waitForAll()
        } }
        #expect(finished.value.load(ordering: .relaxed) == waiting)
    }
}

private final class FinishedCount: Sendable {
    let value = Atomic<Int>(0)
}
