import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `-o DIR --resize SIZE` with the built binary: the copies' real pixels, decoded.
@Suite("sdfetch -o DIR --resize, end to end", .cleansUp, .timeLimit(.minutes(2)))
struct ResizedOutputTests {
    let directory = TemporaryDirectory("resize")

    /// Serves each fixture at `/name`, fetches them all with `options`, and returns each
    /// path's JSON result.
    private func fetch(
        _ names: [String], _ options: [String], server: LoopbackServer, cache: String? = nil
    ) async throws -> [String: [String: Any]] {
        for name in names { server.route("/" + name, .ok(ImageFixture.bytes(name))) }
        let list = directory.write(names.map { server.url("/" + $0) }.joined(separator: "\n"), to: "list")
        let run = try await ProcessRun.sdfetch(
            ["--cache-dir", cache ?? directory.appending("cache"), "--json"] + options + [list])
        var results: [String: [String: Any]] = [:]
        for line in run.standardOutput.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let url = try #require(object["url"] as? String)
            results[String(url.split(separator: "/").last!)] = object
        }
        return results
    }

    private func decoded(_ result: [String: Any]?) throws -> ImageFixture.Decoded {
        let path = try #require(result?["path"] as? String)
        return try #require(ImageFixture.decode(file: path))
    }

    @Test("each mode gives its size and shows its part of a 400x200 red-green-blue band image")
    func modes() async throws {
        let server = try await LoopbackServer()
        let cache = directory.appending("cache")
        func copy(_ mode: String) async throws -> ImageFixture.Decoded {
            let out = directory.appending("out-" + mode)
            let results = try await fetch(
                ["bands.jpg"], ["-o", out, "--resize", "100", "--resize-mode", mode, "--resize-format", "png"],
                server: server, cache: cache)
            return try decoded(results["bands.jpg"])
        }
        let longer = try await copy("longer")
        #expect((longer.width, longer.height) == (100, 50))
        #expect(longer.isColour(ImageFixture.red, at: 10, 25) && longer.isColour(ImageFixture.green, at: 50, 25))
        #expect(longer.isColour(ImageFixture.blue, at: 90, 25))
        let shorter = try await copy("shorter")
        #expect((shorter.width, shorter.height) == (200, 100))
        #expect(shorter.isColour(ImageFixture.red, at: 20, 50) && shorter.isColour(ImageFixture.blue, at: 180, 50))
        // The centre 200x200 of the source is the green band alone.
        let crop = try await copy("crop")
        #expect((crop.width, crop.height) == (100, 100))
        #expect(
            [(0, 0), (99, 0), (50, 50), (0, 99), (99, 99)].allSatisfy {
                crop.isColour(ImageFixture.green, at: $0.0, $0.1)
            })
        let pad = try await copy("pad")
        #expect((pad.width, pad.height) == (100, 100))
        #expect(pad.isColour(ImageFixture.white, at: 50, 5, tolerance: 0))
        #expect(pad.isColour(ImageFixture.white, at: 50, 95, tolerance: 0))
        #expect(pad.isColour(ImageFixture.red, at: 10, 50) && pad.isColour(ImageFixture.blue, at: 90, 50))
        let none = try await copy("none")
        #expect((none.width, none.height) == (400, 200))
        #expect(server.requests(for: "/bands.jpg") == 1)
    }

    @Test("a second run with another size and format makes the new copies without a request")
    func fromTheCache() async throws {
        let server = try await LoopbackServer()
        let names = ["bands.jpg", "bands-alpha.png", "bands.gif", "bands.webp"]
        let first = try await fetch(names, ["-o", directory.appending("a"), "--resize", "64"], server: server)
        let requestsAfterFirst = server.totalRequests
        let second = try await fetch(
            names,
            ["-o", directory.appending("b"), "--resize", "32", "--resize-mode", "crop", "--resize-format", "webp"],
            server: server)

        #expect(requestsAfterFirst == names.count)
        #expect(server.totalRequests == names.count)
        for name in names {
            #expect(first[name]?["status"] as? String == "downloaded")
            #expect(second[name]?["status"] as? String == "cached")
            let small = try decoded(second[name])
            #expect((small.format, small.width, small.height) == (.webp, 32, 32))
            #expect(small.isColour(ImageFixture.green, at: 16, 16))
            let path = try #require(second[name]?["path"] as? String)
            #expect(path.hasSuffix(".webp"))
        }
    }

    @Test("alpha is kept in PNG and WebP copies and flattened on the background in JPEG ones")
    func alpha() async throws {
        let server = try await LoopbackServer()
        let png = try decoded(
            try await fetch(
                ["bands-alpha.png"], ["-o", directory.appending("png"), "--resize", "100", "--resize-format", "png"],
                server: server)["bands-alpha.png"])
        #expect(png.hasAlpha && png.at(95, 25)[3] == 0 && png.at(10, 25)[3] == 255)
        #expect(png.isColour(ImageFixture.red, at: 10, 25))
        let webp = try decoded(
            try await fetch(
                ["bands-alpha.webp"],
                ["-o", directory.appending("webp"), "--resize", "100", "--resize-format", "webp"], server: server)[
                    "bands-alpha.webp"])
        #expect(webp.hasAlpha && webp.at(95, 25)[3] < 10)
        let jpeg = try decoded(
            try await fetch(
                ["bands-alpha.png"],
                ["-o", directory.appending("jpeg"), "--resize", "100", "--resize-background", "#000080"], server: server
            )["bands-alpha.png"])
        #expect(!jpeg.hasAlpha && jpeg.format == .jpeg)
        #expect(jpeg.isColour([0, 0, 128], at: 95, 25, tolerance: 20))
        #expect(jpeg.isColour(ImageFixture.red, at: 10, 25))
    }

    @Test("EXIF orientation 6 is applied: the stored 300x200 is a 200x300 copy, red quadrant top right")
    func orientation() async throws {
        let server = try await LoopbackServer()
        let copy = try decoded(
            try await fetch(
                ["quadrant-exif6.jpg"], ["-o", directory.appending("o"), "--resize", "150", "--resize-format", "png"],
                server: server)["quadrant-exif6.jpg"])
        #expect((copy.width, copy.height) == (100, 150))
        #expect(copy.isColour(ImageFixture.red, at: 90, 10))
        #expect(copy.isColour(ImageFixture.blue, at: 10, 10))
        #expect(copy.isColour(ImageFixture.blue, at: 90, 140))
    }

    @Test("a GIF's copy is its first frame, an animated WebP's too")
    func firstFrame() async throws {
        let server = try await LoopbackServer()
        let results = try await fetch(
            ["bands.gif", "animated.webp"],
            ["-o", directory.appending("g"), "--resize", "100", "--resize-format", "png"],
            server: server)
        for name in ["bands.gif", "animated.webp"] {
            let copy = try decoded(results[name])
            #expect((copy.width, copy.height) == (100, 50))
            #expect(copy.isColour(ImageFixture.red, at: 10, 25) && copy.isColour(ImageFixture.blue, at: 90, 25))
        }
    }

    @Test("an image that cannot be resized fails its URL as corrupt-image; the others are made")
    func undecodable() async throws {
        let server = try await LoopbackServer()
        // Cut in its scan; stored as it is under --verify none, so the resize meets it.
        let broken = Array(ImageFixture.bytes("bands.jpg").prefix(3000))
        server.route("/broken.jpg", .ok(broken))
        server.route("/bands.webp", .ok(ImageFixture.bytes("bands.webp")))
        let list = directory.write(
            [server.url("/broken.jpg"), server.url("/bands.webp")].joined(separator: "\n"), to: "l")
        let out = directory.appending("u")
        let run = try await ProcessRun.sdfetch(
            [
                "--cache-dir", directory.appending("cache"), "--json", "--verify", "none", "-o", out, "--resize", "50",
                list,
            ])
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        let brokenLine = try #require(lines.first { $0.contains("broken.jpg") })
        let goodLine = try #require(lines.first { $0.contains("bands.webp") })

        #expect(run.status == 1)
        #expect(brokenLine.contains(#""status":"failed""#) && brokenLine.contains(#""error":"corrupt-image""#))
        #expect(goodLine.contains(#""status":"downloaded""#))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).count == 1)
    }

    @Test("a copy larger than --max-pixels is too-many-pixels, refused before its pixels exist")
    func outputOverLimit() async throws {
        let server = try await LoopbackServer()
        let results = try await fetch(
            ["bands.jpg"], ["-o", directory.appending("m"), "--resize", "16000", "--resize-mode", "shorter"],
            server: server)
        #expect(results["bands.jpg"]?["error"] as? String == "too-many-pixels")
    }

    @Test("shrink-on-load: a 3200x2400 JPEG made into a 200 px copy never holds its 23 MB of pixels")
    func shrinkOnLoad() async throws {
        let server = try await LoopbackServer()
        server.route("/large.jpg", .ok(ImageFixture.bytes("large-gradient.jpg")))
        let list = directory.write(server.url("/large.jpg"), to: "l")
        let cache = directory.appending("cache")
        // Download first, so the measured run only reads the cache and resizes.
        _ = try await ProcessRun.sdfetch(["--cache-dir", cache, list])
        func peak(_ size: String) async throws -> Int {
            let measured = try await PeakMemoryRun.launch(
                BuiltProduct.path("sdfetch"),
                [
                    "--no-config", "--progress", "never", "--cache-dir", cache, "-o", directory.appending("s" + size),
                    "--resize", size, list,
                ],
                report: directory.appending("peak-" + size))
            #expect(measured.run.status == 0)
            return measured.peakKiB
        }
        // The full size decodes every pixel: the yardstick on this machine.
        let full = try await peak("3200")
        let small = try await peak("200")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.appending("s200")).first)
        let copy = try #require(ImageFixture.decode(file: directory.appending("s200/" + name)))
        #expect(small + 15_000 < full, "peak \(small) KiB for the small copy, \(full) KiB at full size")
        #expect((copy.width, copy.height) == (200, 150))
    }

    @Test("-o FILE names the copy's format by its extension; --resize-format may not contradict it")
    func formatFromTheFileName() async throws {
        let server = try await LoopbackServer()
        server.route("/bands.jpg", .ok(ImageFixture.bytes("bands.jpg")))
        let cache = directory.appending("cache")
        func copy(_ name: String, _ options: [String] = []) async throws -> ImageFormat? {
            let path = directory.appending(name)
            let run = try await ProcessRun.sdfetch(
                ["--cache-dir", cache, "-o", path, "--resize", "32"] + options + [server.url("/bands.jpg")])
            #expect(run.status == 0, "\(run.standardError)")
            return ImageFixture.decode(file: path)?.format
        }
        #expect(try await copy("a.png") == .png)
        #expect(try await copy("b.WEBP") == .webp)
        #expect(try await copy("c.jpeg") == .jpeg)
        #expect(try await copy("d.thumb") == .jpeg)
        #expect(try await copy("e.thumb", ["--resize-format", "webp"]) == .webp)
        let contradicted = try await ProcessRun.sdfetch(
            [
                "--cache-dir", cache, "-o", directory.appending("e.png"), "--resize", "32", "--resize-format", "webp",
                server.url("/bands.jpg"),
            ])
        #expect(contradicted.status == 2 && contradicted.standardError.contains("--resize-format is webp"))
        #expect(try await copy("f.webp", ["--resize-format", "auto"]) == .webp)
        #expect(server.requests(for: "/bands.jpg") == 1)
    }
}
