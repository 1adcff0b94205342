import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// AVIF through libavif: `--verify full` decodes it, `--resize` makes copies of it, with
/// real files made by avifenc (Scripts/make-resize-fixtures.py).
@Suite("AVIF: decoded by --verify full and --resize", .cleansUp, .timeLimit(.minutes(2)))
struct AVIFTests {
    let directory = TemporaryDirectory("avif")

    @Test("full decodes a real AVIF; one cut short, which structure passes, is corrupt-image")
    func verifyFull() throws {
        let bands = ImageFixture.bytes("bands.avif")
        let cut = Array(bands.dropLast(60))
        let full = ImageVerifier(mode: .full)

        let image = try full.verify(bands).get()
        #expect((image.format, image.width, image.height) == (.avif, 400, 200))
        #expect(throws: Never.self) { try ImageVerifier(mode: .structure).verify(cut).get() }
        #expect(throws: FetchFailure.self) { try full.verify(cut).get() }
        if case .failure(let failure) = full.verify(cut) { #expect(failure.kind == .corruptImage) }
        if case .failure(let failure) = ImageVerifier(mode: .full, maxPixels: 50_000).verify(bands) {
            #expect(failure.kind == .tooManyPixels)
        } else {
            Issue.record("a 400x200 AVIF passed a limit of 50,000 pixels")
        }
        #expect(try full.verify(ImageFixture.bytes("bands-alpha.avif")).get().width == 400)
    }

    @Test("--resize makes copies of AVIF bands, with alpha, and turned by irot")
    func resize() async throws {
        let server = try await LoopbackServer()
        let names = ["bands.avif", "bands-alpha.avif", "quadrant-irot3.avif"]
        for name in names { server.route("/" + name, .ok(ImageFixture.bytes(name))) }
        let list = directory.write(names.map { server.url("/" + $0) }.joined(separator: "\n"), to: "list")
        let out = directory.appending("out")
        let run = try await ProcessRun.sdfetch(
            [
                "--cache-dir", directory.appending("cache"), "--json", "--verify", "full", "-o", out, "--resize", "100",
                "--resize-format", "png", list,
            ])
        #expect(run.status == 0, "\(run.standardError)")
        var copies: [String: ImageFixture.Decoded] = [:]
        for line in run.standardOutput.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let url = try #require(object["url"] as? String)
            let path = try #require(object["path"] as? String, "\(object)")
            let copy = try #require(ImageFixture.decode(file: path))
            copies[String(url.split(separator: "/").last!)] = copy
        }

        let bands = try #require(copies["bands.avif"])
        #expect((bands.width, bands.height) == (100, 50))
        #expect(bands.isColour(ImageFixture.red, at: 10, 25) && bands.isColour(ImageFixture.green, at: 50, 25))
        #expect(bands.isColour(ImageFixture.blue, at: 90, 25))
        let alpha = try #require(copies["bands-alpha.avif"])
        #expect(alpha.hasAlpha && alpha.at(95, 25)[3] < 10 && alpha.at(10, 25)[3] > 245)
        // Stored 300x200, red top left; three quarter turns anticlockwise show it 200x300,
        // red top right, as Exif 6 does for quadrant-exif6.jpg.
        let quadrant = try #require(copies["quadrant-irot3.avif"])
        #expect((quadrant.width, quadrant.height) == (67, 100))
        #expect(quadrant.isColour(ImageFixture.red, at: 60, 10))
        #expect(quadrant.isColour(ImageFixture.blue, at: 5, 10) && quadrant.isColour(ImageFixture.blue, at: 60, 90))
    }
}
