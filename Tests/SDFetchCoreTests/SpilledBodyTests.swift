import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// Bodies past ``SpilledBody/spillThreshold`` go to an unnamed file in the cache's `tmp/`
/// as they arrive, are verified from it and become the entry file; smaller ones stay in memory.
@Suite("Spilled bodies", .cleansUp, .timeLimit(.minutes(1)))
struct SpilledBodyTests {
    let directory = TemporaryDirectory("spilled-body")
    /// 640 x 640 RGBA with stored deflate blocks: about 1.6 MB, six times the threshold.
    static let large = SampleImages.png(width: 640, height: 640, seed: 7)

    private func spillFolder() throws -> Int32 {
        let path = directory.appending("spill")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(fd >= 0)
        return fd
    }

    @Test("a large 2xx body arrives as a spilled file of exactly its bytes; a small one stays in memory")
    func engineSpillsLargeBodies() async throws {
        let server = try await LoopbackServer()
        server.route("/large.png", .ok(Self.large))
        server.route("/small.png", .ok(SampleImages.png(seed: 1)))
        let folder = try spillFolder()
        defer { close(folder) }
        let engine = CurlEngine.scoped(maxTransfers: 2)

        var request = TransferRequest(url: server.url("/large.png"))
        request.spillFolder = folder
        let large = await engine.perform(request)
        request.url = server.url("/small.png")
        let small = await engine.perform(request)

        #expect(large.failure == nil)
        #expect(large.body.isEmpty)
        let spilled = try #require(large.spilled)
        #expect(spilled.count == Int64(Self.large.count))
        #expect(spilled.bytes() == Self.large)
        #expect(small.spilled == nil)
        #expect(small.body == SampleImages.png(seed: 1))
        // Unnamed files: nothing in the folder even while the spilled body is still held.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("spill")).isEmpty)
    }

    @Test("--max-bytes still cuts a spilling body, and the cut leaves no file")
    func maxBytesCutsSpillingBody() async throws {
        let server = try await LoopbackServer()
        // No Content-Length: the cut can only happen while bytes stream in.
        server.route(
            "/large.png", ScriptedResponse(status: 200, body: Self.large, behavior: .streamed(chunk: 64 << 10)))
        let folder = try spillFolder()
        defer { close(folder) }
        let engine = CurlEngine.scoped(maxTransfers: 1)

        var request = TransferRequest(url: server.url("/large.png"), maxBytes: 1 << 20)
        request.spillFolder = folder
        let response = await engine.perform(request)

        #expect(response.failure?.kind == .tooLarge)
        #expect(response.spilled == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("spill")).isEmpty)
    }

    @Test("a spilled download becomes the entry file: same bytes, sha256, and tmp/ left empty")
    func spilledBodyBecomesEntry() async throws {
        let server = try await LoopbackServer()
        server.route("/large.png", .ok(Self.large))
        let fetcher = try Fetcher.forTesting(in: directory)

        let result = try await fetcher.fetch(url: server.url("/large.png"))
        let again = try await fetcher.fetch(url: server.url("/large.png"))

        #expect(result.status == .downloaded)
        #expect(result.bytes == Int64(Self.large.count))
        #expect(result.width == 640)
        let path = try #require(result.path)
        #expect(FileManager.default.contents(atPath: path) == Data(Self.large))
        #expect(result.sha256 == Self.large.withUnsafeBytes(EntryFile.sha256(of:)))
        #expect(again.status == .cached)
        #expect(server.totalRequests == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("cache/tmp")).isEmpty)
    }

    @Test("a corrupt large body is refused and leaves neither an entry nor a temporary file")
    func corruptSpilledBodyIsRefused() async throws {
        var corrupt = Self.large
        corrupt.removeLast(5000)  // cut inside IDAT: the zlib stream never ends
        let server = try await LoopbackServer()
        server.route("/cut.png", .ok(corrupt))
        let fetcher = try Fetcher.forTesting(in: directory)

        let result = try await fetcher.fetch(url: server.url("/cut.png"))

        #expect(result.status == .failed)
        #expect(result.failure?.kind == .corruptImage)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("cache/tmp")).isEmpty)
        let buckets = try FileManager.default.contentsOfDirectory(atPath: directory.appending("cache/entries"))
        for bucket in buckets {
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory.appending("cache/entries/\(bucket)"))
                    .isEmpty)
        }
    }
}
