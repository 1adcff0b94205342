import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// Forged `usage/` counter files (OnDiskFormat.md, "Counters and trimming"; Security.md: the
/// cache directory is untrusted) against the built binary's end-of-run trim: a forged size
/// may move the trim's order, never empty the cache.
@Suite("Forged cache counters, end to end", .cleansUp, .timeLimit(.minutes(1)))
struct ForgedCountersTests {
    let directory = TemporaryDirectory("forgedusage")
    var cache: String { directory.appending("cache") }

    private func entries() async throws -> Int? {
        let run = try await ProcessRun.sdfetch(["stats", "--json", "--cache-dir", cache])
        let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        return object?["entries"] as? Int
    }

    /// A counters file as `BucketUsage` writes it: inode, length, entries, bytes, oldest use,
    /// stored span.
    private func forge(_ bucket: String, inode: UInt64, length: Int64, entries: Int, bytes: Int64) throws {
        let fields = [String(inode), String(length), String(entries), String(bytes), "1", "0", "0"]
        let text = (["sdfetch-usage 2"] + fields + ["end"]).joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: cache + "/usage/" + bucket))
    }

    /// Three images fetched into the cache; returns the server and their URLs plus a fourth, new one.
    private func warmCache() async throws -> (LoopbackServer, [String]) {
        let server = try await LoopbackServer()
        let paths = (0..<4).map { "/f\($0).png" }
        for (index, path) in paths.enumerated() {
            server.route(path, .ok(SampleImages.png(width: 16, height: 16, seed: index)))
        }
        let urls = paths.map { server.url($0) }
        let first = try await ProcessRun.sdfetch(["--cache-dir", cache], input: urls[..<3].joined(separator: "\n"))
        #expect(first.status == 0, "\(first.standardError)")
        #expect(try await entries() == 3)
        return (server, urls)
    }

    /// Runs the list again (three hits, one new entry: the run's own) and checks that its
    /// end-of-run trim under the default 5G cap removed nothing.
    private func expectNothingTrimmed(_ server: LoopbackServer, _ urls: [String]) async throws {
        let run = try await ProcessRun.sdfetch(["--cache-dir", cache], input: urls.joined(separator: "\n"))
        try await server.shutdown()
        #expect(run.status == 0, "\(run.standardError)")
        #expect(!run.standardError.contains("max-cache-size"), "\(run.standardError)")
        #expect(try await entries() == 4)
    }

    @Test("counters claiming a petabyte for a bucket with no index file trim nothing")
    func bucketWithoutIndex() async throws {
        let (server, urls) = try await warmCache()
        let indexed = Set(try FileManager.default.contentsOfDirectory(atPath: cache + "/index"))
        let empty = try #require((0..<256).map { String(format: "%02x", $0) }.first { !indexed.contains($0) })
        try forge(empty, inode: 0, length: 0, entries: 0, bytes: 1 << 50)
        try await expectNothingTrimmed(server, urls)
    }

    @Test("counters matching an index file but claiming 32 GiB an entry are recounted before a trim")
    func countersMatchingTheirIndex() async throws {
        let (server, urls) = try await warmCache()
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: cache + "/index").first { $0.count == 2 })
        let info = try FileManager.default.attributesOfItem(atPath: cache + "/index/" + name)
        let inode = try #require(info[.systemFileNumber] as? UInt64)
        let length = try #require((info[.size] as? NSNumber)?.int64Value)
        // One entry at most in this bucket: 32 GiB is what one index record may claim.
        try forge(name, inode: inode, length: length, entries: 1, bytes: 1 << 35)
        try await expectNothingTrimmed(server, urls)
    }
}
