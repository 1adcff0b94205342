import Foundation
import Synchronization
import SDFetchCore
import SDFetchTestSupport
import Testing

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

    /// ``RefusingDelivery`` that counts its calls.
    final class CountingDelivery: ResultDelivery {
        let calls = Atomic<Int>(0)

        func deliver(_ result: inout FetchResult) {
            calls.add(1, ordering: .relaxed)
            RefusingDelivery().deliver(&result)
        }
    }
}
