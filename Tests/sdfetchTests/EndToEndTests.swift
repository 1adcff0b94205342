import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

@Suite("sdfetch binary end to end", .cleansUp, .timeLimit(.minutes(1)))
struct EndToEndTests {
    let directory = TemporaryDirectory("e2e")

    @Test("a list with duplicates and a broken URL prints one line per unique URL and exits 1")
    func mixedList() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        server.route("/b.png", .ok(SampleImages.png(seed: 2)))
        let list = [server.url("/a.png"), server.url("/b.png"), server.url("/a.png#dup"), server.url("/missing.png")]
        let file = directory.write(list.joined(separator: "\n") + "\n", to: "urls.txt")
        let run = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), ["--cache-dir", directory.appending("cache"), file])

        #expect(run.status == 1)
        let lines = run.standardOutput.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines.count == 3)
        #expect(lines.filter { $0[0] == "downloaded" }.count == 2)
        #expect(lines.contains { $0[0] == "failed" && $0[2] == server.url("/missing.png") })
        #expect(server.requests(for: "/a.png") == 1)
    }

    @Test("a list of good URLs exits 0, and a second run is served from the cache")
    func warmRun() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        let file = directory.write(server.url("/a.png") + "\n", to: "urls.txt")
        let arguments = ["--cache-dir", directory.appending("cache"), file]
        let first = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        let second = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)

        #expect(first.status == 0)
        #expect(first.standardOutput.hasPrefix("downloaded\t"))
        #expect(second.status == 0)
        #expect(second.standardOutput.hasPrefix("cached\t"))
        #expect(server.requests(for: "/a.png") == 1)
    }

    @Test("an unknown option is a usage error with exit status 2")
    func unknownOption() async throws {
        let run = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["--no-such-option"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("--no-such-option"))
    }
}
