import Foundation
import SDFetchTestSupport
import Testing

/// Memory does not scale with `-j` x body size, because bodies past the
/// spill threshold go to a file as they arrive.
@Suite("memory with large bodies", .cleansUp, .timeLimit(.minutes(2)))
struct LargeBodyMemoryTests {
    let directory = TemporaryDirectory("large-body-memory")

    @Test("32 bodies of 4 MB at -j 32 peak far below the 128 MB they would take in memory")
    func peakMemoryIsBoundedByTheSpillThreshold() async throws {
        // 1000 x 1000 RGBA, stored deflate: 4 MB each, all distinct URLs (no coalescing).
        let body = SampleImages.png(width: 1000, height: 1000, seed: 3)
        let server = try await LoopbackServer()
        var lines: [String] = []
        for index in 0..<32 {
            // The delay holds every response until all 32 requests are in: the bodies then arrive together.
            let delay = ThreadSanitizer.scaled(.milliseconds(400))
            server.route("/big/\(index).png", ScriptedResponse(status: 200, body: body, delay: delay))
            lines.append(server.url("/big/\(index).png"))
        }
        let list = directory.write(lines.joined(separator: "\n"), to: "list.txt")
        let measured = try await PeakMemoryRun.launch(
            BuiltProduct.path("sdfetch"),
            ["--no-config", "-j", "32", "--per-host", "32", "--cache-dir", directory.appending("cache"), list],
            report: directory.appending("peak.txt"))

        let results = measured.run.standardOutput.split(separator: "\n")
        #expect(measured.run.status == 0)
        #expect(results.filter { $0.hasPrefix("downloaded\t") }.count == 32)
        #expect(server.peakConcurrentRequests == 32, "the transfers overlapped")
        // The process alone is about 35 MB; held in memory the bodies would add 128 MB.
        #expect(measured.peakKiB < 100 << 10, "peak RSS \(measured.peakKiB) KiB")
    }
}

/// A spill file that cannot grow (here `ulimit -f`, as a full disk would) fails only that URL.
@Suite("large bodies when the disk refuses", .cleansUp, .timeLimit(.minutes(1)))
struct SpillWriteFailureTests {
    let directory = TemporaryDirectory("spill-write-failure")

    @Test("a body whose spill file cannot be written is an io failure, not blacklisted; small ones still land")
    func unwritableSpillIsAnIOFailure() async throws {
        let server = try await LoopbackServer()
        server.route("/big.png", .ok(SampleImages.png(width: 640, height: 640, seed: 1)))
        server.route("/small.png", .ok(SampleImages.png(seed: 2)))
        let list = directory.write(
            [server.url("/big.png"), server.url("/small.png")].joined(separator: "\n"), to: "list.txt")
        let cache = directory.appending("cache")
        // Files may not grow past 600 KiB (dash counts 512-byte blocks); SIGXFSZ ignored so
        // write(2) fails with EFBIG instead of killing the process.
        let script = "trap '' XFSZ && ulimit -f 1200 && exec \"$0\" \"$@\""
        let run = try await ProcessRun.launch(
            "/bin/sh",
            ["-c", script, BuiltProduct.path("sdfetch"), "--no-config", "--json", "--cache-dir", cache, list])
        let again = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), ["--no-config", "--json", "--cache-dir", cache, list])

        let big = try #require(run.standardOutput.split(separator: "\n").first { $0.contains("/big.png") })
        #expect(big.contains("\"status\":\"failed\"") && big.contains("\"error\":\"io\""))
        #expect(big.contains("tmp folder"))
        #expect(run.standardOutput.contains("\"status\":\"downloaded\""))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache + "/tmp").isEmpty)
        // Not a permanent failure: the next run without the limit fetches it.
        #expect(server.requests(for: "/big.png") == 2)
        #expect(
            again.standardOutput.split(separator: "\n").first { $0.contains("/big.png") }?.contains("\"downloaded\"")
                == true)
    }
}
