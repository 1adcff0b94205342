import Foundation
import SDFetchCore
import SDFetchTestSupport
import Synchronization
import Testing

@testable import SDFetchCore

/// A store that meets a bucket lock held elsewhere (a replaced entry, while a `clean`
/// removes a batch) waits for it at most briefly, on the fetcher's own threads
/// (``BlockingPool``), never on the cooperative pool, and never for the holder: a stopped
/// `clean` delays no fetch (SDFetchCore.docc, OnDiskFormat, "Locks"; Pipeline, "Where
/// threads are"). With more such stores than the pool has threads, every one finishes
/// while the lock is still held, and other tasks still run.
@Suite("stores off the cooperative pool", .cleansUp, .timeLimit(.minutes(1)))
struct BlockingStoreTests {
    let directory = TemporaryDirectory("blocking-store")

    @Test("stores meeting a bucket lock held elsewhere finish without its holder, off the cooperative pool")
    func storesNeverWaitForALockHolder() async throws {
        let server = try await LoopbackServer()
        let waiting = ProcessInfo.processInfo.activeProcessorCount + 2
        let urls = Self.urls(inOneBucket: waiting, server: server)
        for (index, url) in urls.enumerated() { server.route(url.path, .ok(SampleImages.png(seed: index))) }
        let fetcher = try Fetcher.forTesting(in: directory, now: Date.init) { $0.refresh = true }
        // A first fetch of each: the entries exist, so the next stores replace them, which
        // renames under the bucket's lock.
        for url in urls { #expect(try await fetcher.fetch(url: url.text).status == .downloaded) }

        // Another "process" (an open file description of its own) holds the bucket's lock.
        let lockPath = directory.appending("cache/locks/\(urls[0].bucket)")
        let holder = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(holder >= 0 && flock(holder, LOCK_EX) == 0)
        defer { close(holder) }
        // Should the stores park the pool (the regression this test is for), this task could
        // never release the lock: a watchdog thread does, so the test fails instead of hanging.
        let released = Released()
        Thread {
            Thread.sleep(forTimeInterval: 20)
            released.value.store(true, ordering: .relaxed)
            flock(holder, LOCK_UN)
        }.start()
        let finished = Finished()

        try await withThrowingTaskGroup(of: FetchResult.self) { group in
            for url in urls {
                group.addTask {
                    defer { finished.value.add(1, ordering: .relaxed) }
                    return try await fetcher.fetch(url: url.text)
                }
            }
            let answer = await Task.detached { 42 }.value
            #expect(answer == 42)
            for try await result in group { #expect(result.status == .downloaded) }
            let wasReleased = released.value.load(ordering: .relaxed)
            #expect(!wasReleased, "the stores waited for the lock's holder")
        }
        #expect(finished.value.load(ordering: .relaxed) == waiting)
        for url in urls { #expect(server.requests(for: url.path) == 2) }
    }

    /// `count` URLs on `server` whose keys fall in one cache bucket (the first's).
    private static func urls(
        inOneBucket count: Int, server: LoopbackServer
    ) -> [(path: String, text: String, bucket: String)] {
        var found: [(path: String, text: String, bucket: String)] = []
        var candidate = 0
        while found.count < count {
            let path = "/same-bucket-\(candidate).png"
            candidate += 1
            guard let key = try? URLKey(parsing: server.url(path)) else { continue }
            let bucket = String(key.digest.hex.prefix(2))
            if found.isEmpty || found[0].bucket == bucket { found.append((path, server.url(path), bucket)) }
        }
        return found
    }
}

private final class Finished: Sendable {
    let value = Atomic<Int>(0)
}

private final class Released: Sendable {
    let value = Atomic<Bool>(false)
}
