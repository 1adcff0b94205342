import Foundation
import SDFetchTestSupport
import Testing

/// JSON `duplicates`: every further occurrence of a key in the input, whatever the timing.
@Suite("JSON duplicates are deterministic", .timeLimit(.minutes(1)))
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
        defer { directory.remove() }
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
        try await server.shutdown()

        #expect(run.status == 0)
        let byURL = Dictionary(uniqueKeysWithValues: try objects(run).map { ($0["url"] as! String, $0) })
        #expect(byURL[server.url("/a.png")]?["status"] as? String == "cached")
        #expect(byURL[server.url("/a.png")]?["duplicates"] as? Int == 2)
        #expect(byURL[server.url("/b.png")]?["duplicates"] as? Int == 1)
        #expect(run.standardError.contains("3 duplicates coalesced"))
    }

    @Test("a repeat written by a producer after the first result is done still counts")
    func lateRepeatFromPipe() async throws {
        defer { directory.remove() }
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = ["--cache-dir", cache, "--json", "-"]
        process.environment = ["HOME": directory.path]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let collected = OutputCollector(output.fileHandleForReading)
        try input.fileHandleForWriting.write(contentsOf: Data((server.url("/a.png") + "\n").utf8))
        let deadline = ContinuousClock.now + .seconds(10)
        while server.requests(for: "/a.png") == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(300))  // let the result complete; it must not be final yet
        try input.fileHandleForWriting.write(contentsOf: Data((server.url("/a.png") + "\n").utf8))
        try input.fileHandleForWriting.close()
        await process.exited()
        let text = collected.wait()
        try await server.shutdown()

        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["duplicates"] as? Int == 1)
        #expect(text.split(separator: "\n").count == 1)
    }
}
