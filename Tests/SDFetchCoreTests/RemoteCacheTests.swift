import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// The remote cache tier against a real nginx with WebDAV `PUT` on loopback and a
/// loopback origin: hits, misses, uploads, read-only mode, refused writes, bytes that do
/// not match their record, and runners side by side.
@Suite(
    "Remote cache over HTTP", .cleansUp, .timeLimit(.minutes(2)),
    .enabled(if: FileManager.default.isExecutableFile(atPath: LocalNginx.binary), "nginx is not installed"))
struct RemoteCacheTests {
    let directory = TemporaryDirectory("remote")

    private func remote() async throws -> LocalNginx {
        try await LocalNginx.startRemoteCache(directory: directory.appending("nginx"))
    }

    @Test("a second runner with an empty cache is served by the remote, and the origin sees each URL once")
    func secondRunnerHits() async throws {
        let (origin, urls) = try await RemoteRunner.origin(6)
        let nginx = try await remote()
        let first = try await RemoteRunner.run(urls, remotes: [nginx.url("cache")], in: directory, name: "a")
        #expect(first.count(.downloaded) == 6)
        #expect(first.counts.uploads == 6 && first.counts.misses == 6 && first.counts.hits == 0)
        #expect(nginx.storedNames(in: "cache/cas").count == 6 && nginx.storedNames(in: "cache/ac").count == 6)

        let second = try await RemoteRunner.run(urls, remotes: [nginx.url("cache")], in: directory, name: "b")
        #expect(second.count(.cached) == 6)
        #expect(second.results.allSatisfy { $0.remote == nginx.url("cache") })
        #expect(second.counts.hits == 6 && second.counts.uploads == 0 && second.counts.errors == 0)
        #expect(origin.totalRequests == 6)
        // The bytes served are the origin's, now in the second runner's own cache.
        for (index, result) in second.results.enumerated() {
            let path = try #require(result.path)
            #expect(FileManager.default.contents(atPath: path) == Data(SampleImages.png(seed: index)))
        }
        let offline = try await RemoteRunner.run(urls, remotes: [], in: directory, name: "b") { $0.offline = true }
        #expect(offline.count(.cached) == 6)
    }

    @Test("the record keeps the origin's stored time and validators")
    func recordKeepsValidators() async throws {
        let origin = try await LoopbackServer()
        origin.route("/v.png", .ok(SampleImages.png(seed: 9), headers: [("ETag", "\"v9\"")]))
        let nginx = try await remote()
        let url = origin.url("/v.png")
        _ = try await RemoteRunner.run([url], remotes: [nginx.url("cache")], in: directory, name: "a")
        let second = try await RemoteRunner.run([url], remotes: [nginx.url("cache")], in: directory, name: "b")
        #expect(second.count(.cached) == 1)
        let cache = try DiskCache(directory: directory.appending("b"))
        let entry = try #require(cache.entry(for: try URLKey(parsing: url)))
        let original = try #require(try DiskCache(directory: directory.appending("a")).entry(for: URLKey(parsing: url)))
        #expect(entry.etag == "\"v9\"" && entry.storedAt == original.storedAt)
    }

    @Test("read-only mode looks up but uploads nothing")
    func readOnlyUploadsNothing() async throws {
        let (origin, urls) = try await RemoteRunner.origin(3)
        let nginx = try await remote()
        let run = try await RemoteRunner.run(urls, remotes: [nginx.url("cache")], in: directory, name: "a") {
            $0.remoteCache.mode = .readOnly
        }
        #expect(run.count(.downloaded) == 3 && run.counts.misses == 3 && run.counts.uploads == 0)
        #expect(nginx.requestCount(prefix: "/cache/", method: "PUT") == 0)
        #expect(nginx.requestCount(prefix: "/cache/ac/", method: "GET") == 3)
        #expect(origin.totalRequests == 3)
    }

    @Test("a remote that refuses writes (403, then 507) is switched off with one warning and costs no URL")
    func refusedWritesSwitchOff() async throws {
        let (_, urls) = try await RemoteRunner.origin(8)
        let nginx = try await remote()
        for folder in ["refuse", "full"] {
            let run = try await RemoteRunner.run(urls, remotes: [nginx.url(folder)], in: directory, name: folder)
            #expect(run.count(.downloaded) == 8)
            #expect(run.counts.uploads == 0 && run.counts.errors == RemoteTier.errorLimit)
            #expect(run.warnings.count == 1)
            let warning = try #require(run.warnings.first)
            #expect(warning.remote == nginx.url(folder))
            #expect(warning.detail.contains(folder == "refuse" ? "HTTP 403" : "HTTP 507"))
        }
    }

    @Test("an object whose bytes are not its record's is a remote error and the origin answers")
    func corruptObjectIsRefused() async throws {
        let (origin, urls) = try await RemoteRunner.origin(1)
        let nginx = try await remote()
        _ = try await RemoteRunner.run(urls, remotes: [nginx.url("cache")], in: directory, name: "a")
        let object = try #require(nginx.storedNames(in: "cache/cas").first)
        let path = nginx.directory + "/www/cache/cas/" + object
        var bytes = try #require(FileManager.default.contents(atPath: path))
        bytes[bytes.count - 5] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))

        let run = try await RemoteRunner.run(urls, remotes: [nginx.url("cache")], in: directory, name: "b")
        #expect(run.count(.downloaded) == 1 && run.results[0].remote == nil)
        #expect(run.counts.errors == 1 && run.counts.hits == 0 && run.counts.misses == 1)
        #expect(origin.totalRequests == 2)
    }

    @Test("bytes that match their record but are no image are refused, never a result")
    func nonImageIsRefused() async throws {
        let origin = try await LoopbackServer()
        origin.route("/p.png", .ok(SampleImages.png(seed: 3)))
        let nginx = try await remote()
        let url = origin.url("/p.png")
        _ = try await RemoteRunner.run([url], remotes: [nginx.url("cache")], in: directory, name: "a")
        // A record and object written by someone else: a web page under its own true digest.
        let page = Array("<html><body>not an image</body></html>".utf8)
        let digest = page.withUnsafeBytes(EntryFile.sha256(of:))
        try Data(page).write(to: URL(fileURLWithPath: nginx.directory + "/www/cache/cas/" + digest))
        let recordPath = nginx.directory + "/www/cache/ac/" + (try URLKey(parsing: url)).digest.hex
        let stored = try #require(FileManager.default.contents(atPath: recordPath))
        var record = try #require(RemoteRecord.decoded([UInt8](stored)))
        record.sha256 = digest
        record.bytes = Int64(page.count)
        try Data(record.encoded).write(to: URL(fileURLWithPath: recordPath))

        let run = try await RemoteRunner.run([url], remotes: [nginx.url("cache")], in: directory, name: "b")
        #expect(run.count(.downloaded) == 1 && run.results[0].format == .png)
        #expect(run.counts.errors == 1 && run.counts.hits == 0)
    }

    @Test("a tiny image's evicted object is a miss, though nginx's 404 page is larger than the image")
    func evictedTinyObjectIsMiss() async throws {
        let origin = try await LoopbackServer()
        let image = SampleImages.png(width: 1, height: 1)
        origin.route("/t.png", .ok(image))
        let nginx = try await remote()
        let url = origin.url("/t.png")
        _ = try await RemoteRunner.run([url], remotes: [nginx.url("cache")], in: directory, name: "a")
        let object = try #require(nginx.storedNames(in: "cache/cas").first)
        try FileManager.default.removeItem(atPath: nginx.directory + "/www/cache/cas/" + object)

        // What the object's GET now meets, read without the image's bound: a page larger than it.
        let connection = RemoteHTTPConnection(connection: ConnectionOptions(), bearerToken: nil, userAgent: "test")
        let answer = connection.get(nginx.url("cache/cas/" + object), maxBytes: 1 << 20, timeout: .seconds(5))
        guard case .status(404, let page) = answer else {
            Issue.record("the object is not missing: \(answer)")
            return
        }
        #expect(page.count > image.count)

        let run = try await RemoteRunner.run([url], remotes: [nginx.url("cache")], in: directory, name: "b")
        #expect(run.count(.downloaded) == 1)
        #expect(run.counts.misses == 1 && run.counts.errors == 0 && run.warnings.isEmpty)
    }

    @Test("a record over --max-bytes is a miss: its object is never read")
    func oversizedRecordIsNotRead() async throws {
        let (_, urls) = try await RemoteRunner.origin(1)
        let nginx = try await remote()
        _ = try await RemoteRunner.run(urls, remotes: [nginx.url("cache")], in: directory, name: "a")
        let run = try await RemoteRunner.run(urls, remotes: [nginx.url("cache")], in: directory, name: "b") {
            $0.maxBytes = 10
        }
        #expect(run.counts.hits == 0 && run.counts.misses == 1 && run.counts.errors == 0)
        #expect(nginx.requestCount(prefix: "/cache/cas/", method: "GET") == 0)
    }

    @Test("remotes are asked in order: the second answers what the first lacks")
    func remotesInOrder() async throws {
        let (origin, urls) = try await RemoteRunner.origin(2)
        let nginx = try await remote()
        _ = try await RemoteRunner.run(urls, remotes: [nginx.url("second")], in: directory, name: "a")
        let run = try await RemoteRunner.run(
            urls, remotes: [nginx.url("first"), nginx.url("second")], in: directory, name: "b")
        #expect(run.count(.cached) == 2 && run.results.allSatisfy { $0.remote == nginx.url("second") })
        #expect(origin.totalRequests == 2)
    }

    @Test("runners side by side on one remote all succeed, and what they stored serves a third")
    func concurrentRunners() async throws {
        let (_, urls) = try await RemoteRunner.origin(30)
        let nginx = try await remote()
        let runs = try await withThrowingTaskGroup(of: RemoteRunner.self) { group in
            for name in ["a", "b", "c"] {
                group.addTask {
                    try await RemoteRunner.run(
                        urls.shuffled(), remotes: [nginx.url("cache")], in: directory, name: name)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(runs.allSatisfy { $0.results.allSatisfy { $0.status.isSuccess } && $0.counts.errors == 0 })
        let third = try await RemoteRunner.run(urls, remotes: [nginx.url("cache")], in: directory, name: "d")
        #expect(third.counts.hits == 30 && third.counts.errors == 0)
    }
}
