import Foundation
import SDFetchTestSupport
import Synchronization
import Testing

@testable import SDFetchCore

/// A status is decided once and counted once: after the last step (delivery), for the bar
/// and the summary alike.
@Suite("Counting results", .cleansUp, .timeLimit(.minutes(1)))
struct RunLedgerTests {
    let directory = TemporaryDirectory("tally")

    /// A delivery that cannot write anything, as `-o` into a full disk would behave.
    struct RefusingDelivery: ResultDelivery {
        func deliver(_ result: inout FetchResult) {
            guard result.status.isSuccess else { return }
            result.status = .failed
            result.failure = FetchFailure(.io, "no space left on device")
            result.path = nil
        }
    }

    @Test("a download whose delivery fails is counted failed, once, by the bar and the summary alike")
    func deliveryDecidesBeforeCounting() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        server.route("/gone.png", .status(404))
        let list = directory.write([server.url("/a.png"), server.url("/gone.png")].joined(separator: "\n"), to: "l")
        let fetcher = try Fetcher.forTesting(in: directory)
        let run = FetchRun(fetcher: fetcher, sources: [.file(list)], delivery: RefusingDelivery())
        let collected = await CollectedRun.collect(run)

        #expect(collected.results.map(\.status) == [.failed, .failed])
        #expect(collected.summary.count(.failed) == 2 && collected.summary.count(.downloaded) == 0)
        #expect(collected.summary.errorKinds == [.io: 1, .http(404): 1])
        #expect(collected.summary.requests == 2)
        #expect(collected.summary.downloadedBytes == 0)
        let bar = run.progress.snapshot
        #expect(bar.failed == 2 && bar.downloaded == 0 && bar.done == 2)
    }

    /// Warm hits are delivered by the intake, right after their lookup: the count still
    /// follows the delivery's verdict, and the delivery runs once.
    @Test("a cache hit whose delivery fails is counted failed, once, and delivered once")
    func hitDeliveryDecidesBeforeCounting() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<100).map { "/h\($0).png" }
        for (index, path) in paths.enumerated() { server.route(path, .ok(SampleImages.png(seed: index))) }
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "l")
        let fetcher = try Fetcher.forTesting(in: directory)
        _ = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))
        let deliveries = CountingDelivery()
        let run = FetchRun(fetcher: fetcher, sources: [.file(list)], delivery: deliveries)
        let collected = await CollectedRun.collect(run)

        #expect(collected.results.count == 100 && collected.results.allSatisfy { $0.status == .failed })
        #expect(collected.summary.count(.failed) == 100 && collected.summary.count(.cached) == 0)
        #expect(collected.summary.errorKinds == [.io: 100])
        #expect(collected.summary.requests == 0)
        #expect(deliveries.calls.load(ordering: .relaxed) == 100)
        let bar = run.progress.snapshot
        #expect(bar.failed == 100 && bar.cached == 0 && bar.done == 100)
    }

    /// The ledger on its own: what a consumer sees, in the order things were published.
    @Test("a result queued after the input's end carries its key's final duplicates")
    func duplicatesFinalAfterInputEnds() async throws {
        let ledger = RunLedger(progress: RunProgress())
        let first = try URLKey(parsing: "http://example.test/a.png")
        let second = try URLKey(parsing: "http://example.test/b.png")
        ledger.noteDuplicates([first.digest])
        ledger.publish([FetchResult(url: first.string, key: first, status: .cached)])
        ledger.noteDuplicates([first.digest, second.digest, second.digest])
        ledger.inputDidFinish()
        ledger.publish([FetchResult(url: second.string, key: second, status: .downloaded, bytes: 10)])
        ledger.finish(usedKeys: [first.digest, second.digest])

        var events: [FetchEvent] = []
        while let taken = await ledger.next() { events += taken }
        #expect(events.count == 4)
        guard events.count == 4, case .results(let early) = events[0], case .inputFinished(let final) = events[1],
            case .results(let late) = events[2], case .finished(let summary) = events[3]
        else { return }
        #expect(early.map(\.duplicates) == [1])  // the count known when it was queued
        #expect(final == [first.digest: 2, second.digest: 2])
        #expect(late.map(\.duplicates) == [2])
        #expect(summary.duplicates == 4 && summary.count(.cached) == 1 && summary.count(.downloaded) == 1)
        #expect(summary.downloadedBytes == 10 && summary.usedKeys.count == 2)
    }

    @Test("the intake waits for room while the consumer has not taken a full queue")
    func intakeWaitsForRoom() async throws {
        let ledger = RunLedger(progress: RunProgress())
        let key = try URLKey(parsing: "http://example.test/a.png")
        ledger.publish(Array(repeating: FetchResult(url: key.string, key: key, status: .cached), count: RunLedger.room))
        let hasRoom = Flag()
        let waiter = Task {
            await ledger.waitForRoom()
            hasRoom.value.store(true, ordering: .relaxed)
        }
        try await Task.sleep(for: .milliseconds(100))
        let waitedEarly = !hasRoom.value.load(ordering: .relaxed)
        #expect(waitedEarly)
        let taken = await ledger.next()
        await waiter.value
        let hadRoomLate = hasRoom.value.load(ordering: .relaxed)
        #expect(hadRoomLate)
        #expect(taken?.count == 1)
    }

    /// ``RefusingDelivery`` that counts its calls.
    final class CountingDelivery: ResultDelivery {
        let calls = Atomic<Int>(0)

        func deliver(_ result: inout FetchResult) {
            calls.add(1, ordering: .relaxed)
            RefusingDelivery().deliver(&result)
        }
    }

    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }
}
