import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// The README's "Running past one machine" recipes that can run here: GNU parallel with
/// 4 shards on one cache, and on four caches folded together by `merge`.
@Suite("scale-out with GNU parallel", .cleansUp, .timeLimit(.minutes(2)))
struct ScaleOutTests {
    let directory = TemporaryDirectory("scaleout")
    static let parallel = "/usr/bin/parallel"
    static let hasParallel = FileManager.default.isExecutableFile(atPath: parallel)

    /// 60 URLs served once each; the list file.
    private func serve() async throws -> (LoopbackServer, [String], String) {
        let server = try await LoopbackServer()
        var urls: [String] = []
        for index in 0..<60 {
            server.route("/\(index).png", .ok(SampleImages.png(seed: index)))
            urls.append(server.url("/\(index).png"))
        }
        return (server, urls, directory.write(urls.joined(separator: "\n") + "\n", to: "urls.txt"))
    }

    /// The `url` of every JSON line.
    private func reportedURLs(_ output: String) throws -> [String] {
        try output.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return try #require(object?["url"] as? String)
        }
    }

    @Test(
        "4 shards from --shard auto under GNU parallel share one cache: the union is the list, each URL requested once",
        .enabled(if: ScaleOutTests.hasParallel, "GNU parallel is not installed (Scripts/install-deps.sh installs it)"))
    func fourShardsOneCache() async throws {
        let (server, urls, list) = try await serve()
        let run = try await ProcessRun.launch(
            Self.parallel,
            [
                "--will-cite", "-j4", "env", "SDFETCH_SHARD={}/4", BuiltProduct.path("sdfetch"), "--no-config", "-q",
                "--cache-dir", directory.appending("cache"), "--shard", "auto", "--json", list, ":::", "0", "1", "2",
                "3",
            ])

        #expect(run.status == 0, "\(run.standardError)")
        let reported = try reportedURLs(run.standardOutput)
        #expect(reported.count == urls.count)
        #expect(Set(reported) == Set(urls))
        #expect(server.totalRequests == urls.count)
        #expect(urls.indices.allSatisfy { server.requests(for: "/\($0).png") == 1 })
    }

    @Test(
        "4 shards into four caches, then merge: the merged cache answers the whole list offline",
        .enabled(if: ScaleOutTests.hasParallel, "GNU parallel is not installed"))
    func fourCachesMerged() async throws {
        let binary = BuiltProduct.path("sdfetch")
        let (server, urls, list) = try await serve()
        let run = try await ProcessRun.launch(
            Self.parallel,
            [
                "--will-cite", "-j4", binary, "--no-config", "-q", "--cache-dir", directory.appending("cache-{}"),
                "--shard", "{}/4", "--json", list, ":::", "0", "1", "2", "3",
            ])
        try await server.shutdown()
        #expect(run.status == 0, "\(run.standardError)")
        #expect(Set(try reportedURLs(run.standardOutput)) == Set(urls))
        #expect(server.totalRequests == urls.count)

        let merged = directory.appending("merged")
        let merge = try await ProcessRun.launch(
            binary,
            ["merge", "--no-config", "--cache-dir", merged] + (0..<4).map { directory.appending("cache-\($0)") })
        #expect(merge.status == 0, "\(merge.standardError)")
        let offline = try await ProcessRun.launch(
            binary, ["--no-config", "-q", "--offline", "--cache-dir", merged, list])
        #expect(offline.status == 0)
        #expect(offline.standardOutput.split(separator: "\n").allSatisfy { $0.hasPrefix("cached\t") })
    }
}
