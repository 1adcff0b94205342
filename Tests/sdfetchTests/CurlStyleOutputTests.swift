import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `-o` as a curl user types it, through the built binary: `-o -` to a pipe, and a file
/// name whose extension says what the bytes must be.
@Suite("sdfetch -o -, and -o FILE's extension", .cleansUp, .timeLimit(.minutes(1)))
struct CurlStyleOutputTests {
    let directory = TemporaryDirectory("curl-style-output")
    var cache: String { directory.appending("cache") }

    private func sdfetch(_ arguments: [String]) async throws -> ProcessRun {
        try await ProcessRun.sdfetch(["--cache-dir", cache] + arguments)
    }

    private func serving(_ name: String) async throws -> LoopbackServer {
        let server = try await LoopbackServer()
        server.route("/" + name, .ok(ImageFixture.bytes(name)))
        return server
    }

    private func format(of file: String) -> ImageFormat? {
        FileManager.default.contents(atPath: file).flatMap { ImageFormat.sniff([UInt8]($0)) }
    }

    // MARK: - -o -

    @Test("-o - with one URL writes the image's bytes to standard output and the result line to standard error")
    func streamsToStandardOutput() async throws {
        let server = try await serving("bands.jpg")
        let run = try await sdfetch([server.url("/bands.jpg"), "-o", "-"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(Array(run.standardOutputBytes) == ImageFixture.bytes("bands.jpg"))
        #expect(run.standardError.contains("downloaded\t-\t\(server.url("/bands.jpg"))"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("-")))
        // A hit streams the cached bytes.
        let again = try await sdfetch([server.url("/bands.jpg"), "-o", "-"])
        #expect(Array(again.standardOutputBytes) == ImageFixture.bytes("bands.jpg"))
        #expect(server.requests(for: "/bands.jpg") == 1)
    }

    @Test("-o - with --resize streams the resized copy")
    func streamsResizedCopy() async throws {
        let server = try await serving("bands.jpg")
        let run = try await sdfetch([server.url("/bands.jpg"), "-o", "-", "--resize", "8", "--resize-format", "png"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(ImageFormat.sniff(Array(run.standardOutputBytes)) == .png)
    }

    @Test("-o - with a 404 writes nothing to standard output and exits 1; --json's line goes to standard error")
    func streamFailureAndJSON() async throws {
        let server = try await serving("bands.jpg")
        let missing = try await sdfetch([server.url("/gone.jpg"), "-o", "-"])
        #expect(missing.status == 1, "\(missing.standardError)")
        #expect(missing.standardOutputBytes.isEmpty)
        #expect(missing.standardError.contains("failed\t-\t\(server.url("/gone.jpg"))"), "\(missing.standardError)")
        let json = try await sdfetch([server.url("/bands.jpg"), "-o", "-", "--json"])
        #expect(json.status == 0, "\(json.standardError)")
        #expect(Array(json.standardOutputBytes) == ImageFixture.bytes("bands.jpg"))
        let line = try #require(json.standardError.split(separator: "\n").first { $0.hasPrefix("{") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["status"] as? String == "downloaded" && object["path"] as? String == "-")
    }

    @Test("-o - to a full standard output is the run's write failure (exit 3), not the URL's")
    func streamToFullOutput() async throws {
        let server = try await serving("bands.jpg")
        let run = try await ProcessRun.launch(
            "/bin/sh",
            [
                "-c", "exec \"$@\" > /dev/full", "sh", BuiltProduct.path("sdfetch"), "--no-config", "--cache-dir",
                cache,
                server.url("/bands.jpg"), "-o", "-",
            ],
            environment: ["HOME": directory.path])
        #expect(run.status == 3, "\(run.standardError)")
        #expect(run.standardError.contains("downloaded\t-\t\(server.url("/bands.jpg"))"), "\(run.standardError)")
        #expect(run.standardError.contains("sdfetch: cannot write standard output: "), "\(run.standardError)")
        #expect(!run.standardError.contains("failed\t"), "\(run.standardError)")
        // The image was fetched and stored: a re-run is a hit.
        #expect(try await sdfetch([server.url("/bands.jpg"), "-o", "-"]).standardError.contains("cached\t-\t"))
    }

    @Test("-o - with several URLs is a usage error")
    func streamNeedsOneURL() async throws {
        let server = try await serving("bands.jpg")
        let run = try await sdfetch([server.url("/bands.jpg"), server.url("/other.jpg"), "-o", "-"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("-o - writes one image to standard output"), "\(run.standardError)")
        #expect(server.totalRequests == 0)
    }

    // MARK: - -o FILE's extension

    @Test("several URLs with -o two.png is a usage error, and no folder of that name is made")
    func fileNameForSeveralURLs() async throws {
        let server = try await serving("bands.jpg")
        let target = directory.appending("two.png")
        let run = try await sdfetch([server.url("/bands.jpg"), server.url("/x.jpg"), "-o", target])
        #expect(run.status == 2)
        #expect(run.standardError.contains("names one PNG file, but the input can hold several URLs"))
        #expect(!FileManager.default.fileExists(atPath: target))
        let folder = try await sdfetch([server.url("/bands.jpg"), "-o", directory.appending("plain")])
        #expect(folder.status == 0, "a name without an image extension stays a folder")
    }

    @Test("--resize with -o t.png converts a JPEG to PNG; -o t.gif is a usage error")
    func resizeFollowsTheName() async throws {
        let server = try await serving("bands.jpg")
        let png = directory.appending("t.png")
        let converted = try await sdfetch([server.url("/bands.jpg"), "--resize", "16", "-o", png])
        #expect(converted.status == 0, "\(converted.standardError)")
        #expect(format(of: png) == .png)
        let gif = try await sdfetch([server.url("/bands.jpg"), "--resize", "16", "-o", directory.appending("t.gif")])
        #expect(gif.status == 2)
        #expect(gif.standardError.contains("names a GIF file, but --resize writes JPEG (.jpg), PNG (.png) or WebP"))
        let clash = try await sdfetch(
            [server.url("/bands.jpg"), "--resize", "16", "--resize-format", "webp", "-o", directory.appending("u.png")])
        #expect(clash.status == 2)
        #expect(clash.standardError.contains("names a PNG file, but --resize-format is webp"))
    }

    @Test("-o x.png for a JPEG without --resize keeps the bytes and warns")
    func mismatchedNameWarns() async throws {
        let server = try await serving("bands.jpg")
        let file = directory.appending("x.png")
        let run = try await sdfetch([server.url("/bands.jpg"), "-o", file])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(format(of: file) == .jpeg)
        #expect(run.standardError.contains("warning: \(file) holds the JPEG image as fetched, not PNG"))
        let matching = try await sdfetch([server.url("/bands.jpg"), "-o", directory.appending("x.jpeg")])
        #expect(!matching.standardError.contains("warning"), "\(matching.standardError)")
    }

    @Test("--resize without -o says that nothing is resized")
    func resizeWithoutOutput() async throws {
        let server = try await serving("bands.jpg")
        let run = try await sdfetch([server.url("/bands.jpg"), "--resize", "16"])
        #expect(run.status == 0)
        #expect(run.standardError.contains("warning: --resize makes the -o copies; without -o nothing is resized"))
    }
}
