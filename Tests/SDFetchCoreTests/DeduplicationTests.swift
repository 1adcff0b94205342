import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

@Suite("De-duplication", .cleansUp, .timeLimit(.minutes(1)))
struct DeduplicationTests {
    let directory = TemporaryDirectory("dedup")

    @Test("50 unique URLs repeated 4 times and shuffled make 50 requests")
    func repeatedListMakesOneRequestPerKey() async throws {
        let server = try await LoopbackServer()
        var lines: [String] = []
        for index in 0..<50 {
            server.route("/img/\(index).png", .ok(SampleImages.png(seed: index)))
            // Spellings that the identity rule folds together.
            lines += [
                server.url("/img/\(index).png"), server.url("/img/\(index).png#a"),
                server.url("/img/\(index).png").replacingOccurrences(of: "http://", with: "HTTP://"),
                server.url("/img/\(index).png"),
            ]
        }
        var random = SeededRandom("deduplication")
        let list = directory.write(lines.shuffled(using: &random).joined(separator: "\n"), to: "list.txt")
        let cache = try DiskCache(directory: directory.appending("cache"))
        let fetcher = Fetcher.scoped(options: FetchOptions(), cache: cache)
        let collected = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))

        #expect(server.totalRequests == 50)
        #expect(collected.results.count == 50)
        #expect(collected.results.allSatisfy { $0.status == .downloaded })
        #expect(collected.summary.duplicates == 150)
        for index in [0, 17, 49] {
            let result = try #require(collected.results.first { $0.key?.string == server.url("/img/\(index).png") })
            let path = try #require(result.path)
            let onDisk = try #require(FileManager.default.contents(atPath: path))
            #expect(Array(onDisk) == SampleImages.png(seed: index))
        }
    }

    /// The run's seen-set is its one coalescing point: occurrences met while the key's
    /// fetch is in flight join it, as they do on the command line.
    @Test("200 occurrences of one key, read while its fetch is in flight, make one request")
    func occurrencesInFlightCoalesce() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", ScriptedResponse(status: 200, body: SampleImages.png(), delay: .milliseconds(300)))
        let url = server.url("/a.png")
        let fetcher = try Fetcher.forTesting(in: directory)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let run = FetchRun(fetcher: fetcher, sources: [.standardInput])
        let reader = URLListReader(sources: [.standardInput], standardInput: fds[0])
        func send(_ text: String) { _ = text.withCString { write(fds[1], $0, strlen($0)) } }
        send(url + "\n")
        async let collected = CollectedRun.collect(run, reader: reader)
        // The first line's request is under way before the other 199 lines are written.
        #expect(await server.waitForRequests(1))
        for index in 1..<200 { send((index.isMultiple(of: 2) ? url : url + "#\(index)") + "\n") }
        close(fds[1])
        let result = await collected
        close(fds[0])

        #expect(server.requests(for: "/a.png") == 1)
        #expect(result.results.map(\.status) == [.downloaded])
        #expect(result.summary.duplicates == 199)
        let key = try URLKey(parsing: url)
        #expect(result.duplicates[key.digest] == 199)
    }
}
