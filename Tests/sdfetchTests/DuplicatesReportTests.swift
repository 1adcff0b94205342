import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// JSON `duplicates`: every further occurrence of a key in the input, whatever the timing.
@Suite("JSON duplicates are deterministic", .cleansUp, .timeLimit(.minutes(1)))
struct DuplicatesReportTests {
    let directory = TemporaryDirectory("dups")
    var cache: String { directory.appending("cache") }

    private func objects(_ run: ProcessRun) throws -> [[String: Any]] {
        try run.standardOutput.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test("a key served from the cache counts its later occurrences, like a downloaded one")
    func cachedKeyCountsLaterOccurrences() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        server.route(
            "/b.png", ScriptedResponse(status: 200, body: SampleImages.png(seed: 2), delay: .milliseconds(200)))
        let warm = directory.write(server.url("/a.png") + "\n", to: "warm")
        _ = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["--cache-dir", cache, warm])
        // a is answered inline from the cache before its repeats (one spelled differently) are read.
        let lines = [
            server.url("/a.png"), server.url("/b.png"), server.url("/b.png"), server.url("/a.png"),
            server.url("/a.png#frag"),
        ]
        let list = directory.write(lines.joined(separator: "\n"), to: "l")
        let run = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["--cache-dir", cache, "--json", list])

        #expect(run.status == 0)
        let byURL = Dictionary(uniqueKeysWithValues: try objects(run).map { ($0["url"] as! String, $0) })
        #expect(byURL[server.url("/a.png")]?["status"] as? String == "cached")
        #expect(byURL[server.url("/a.png")]?["duplicates"] as? Int == 2)
        #expect(byURL[server.url("/b.png")]?["duplicates"] as? Int == 1)
        #expect(run.standardError.contains("3 duplicates coalesced"))
    }

    @Test("a repeat written by a producer after the first result is done still counts")
    func lateRepeatFromPipe() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        let run = try PipedRun.start(["--cache-dir", cache, "--json", "-"], home: directory.path)
        try run.write(server.url("/a.png") + "\n")
        // The ordering that matters: the first occurrence's result is complete (its entry is
        // stored, which precedes its report) before the repeat is written.
        let key = try URLKey(parsing: server.url("/a.png"))
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? DiskCache(directory: cache, readOnly: true).entry(for: key)) == nil, ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(try DiskCache(directory: cache, readOnly: true).entry(for: key) != nil)
        try run.write(server.url("/a.png") + "\n")
        let text = try await run.finish()

        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["duplicates"] as? Int == 1)
        #expect(text.split(separator: "\n").count == 1)
    }
}
