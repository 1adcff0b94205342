import Foundation
import SDFetchCore
import SDFetchTestSupport

/// One runner of a fleet in a test: its own empty cache under `directory/name`, a
/// fetcher with `--remote-cache`, the URLs fetched one after another, then the fetcher
/// shut down (its uploads waited for) so the counts are final.
struct RemoteRunner {
    let results: [FetchResult]
    let counts: RemoteCounts
    let warnings: [RemoteWarning]
    let elapsed: Duration

    static func run(
        _ urls: [String], remotes: [String], in directory: TemporaryDirectory, name: String,
        _ configure: (inout FetchOptions) -> Void = { _ in }
    ) async throws -> RemoteRunner {
        var options = FetchOptions()
        options.retries = 0
        options.remoteCache.urls = remotes
        configure(&options)
        let cache = try DiskCache(directory: directory.appending(name))
        let started = ContinuousClock.now
        let (results, remote) = await withFetcher(options: options, cache: cache) { fetcher in
            var results: [FetchResult] = []
            for url in urls { results.append(try! await fetcher.fetch(url: url)) }
            return (results, fetcher.remote)
        }
        return RemoteRunner(
            results: results, counts: remote?.counts ?? RemoteCounts(), warnings: remote?.warnings ?? [],
            elapsed: ContinuousClock.now - started)
    }

    /// An origin serving `count` distinct PNGs at `/i/N.png`, and their URLs.
    static func origin(_ count: Int) async throws -> (LoopbackServer, [String]) {
        let server = try await LoopbackServer()
        for index in 0..<count { server.route("/i/\(index).png", .ok(SampleImages.png(seed: index))) }
        return (server, (0..<count).map { server.url("/i/\($0).png") })
    }

    /// Results of each status.
    func count(_ status: FetchStatus) -> Int { results.count { $0.status == status } }
}
