import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// WebP under `--verify full` with the built binary: decoded by libwebp, within the budgets.
@Suite("sdfetch --verify full on WebP, end to end", .cleansUp, .timeLimit(.minutes(1)))
struct WebPVerdictTests {
    let directory = TemporaryDirectory("webp")

    /// Each body served at `/name` and fetched in one run; the JSON result per name.
    private func verdicts(_ bodies: [String: [UInt8]], _ options: [String]) async throws -> [String: [String: Any]] {
        let server = try await LoopbackServer()
        for (name, body) in bodies { server.route("/" + name, .ok(body)) }
        let list = directory.write(
            bodies.keys.sorted().map { server.url("/" + $0) }.joined(separator: "\n"), to: "list")
        let cache = directory.appending("cache-" + options.joined())
        let run = try await ProcessRun.sdfetch(["--cache-dir", cache, "--json"] + options + [list])
        var results: [String: [String: Any]] = [:]
        for line in run.standardOutput.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            results[String((object["url"] as? String ?? "").split(separator: "/").last ?? "")] = object
        }
        return results
    }

    /// The lossy fixture with its VP8 payload cut in half and the RIFF and chunk sizes made
    /// to agree: every chunk is in place (the structure walk passes), the bitstream ends early.
    private static func bitstreamCutShort() -> [UInt8] {
        let good = ImageFixture.bytes("bands.webp")
        let payload = Int(good[16]) | Int(good[17]) << 8 | Int(good[18]) << 16
        let kept = payload / 2
        var cut = Array(good.prefix(20 + kept))
        cut.replaceSubrange(16..<20, with: [UInt8(kept & 0xFF), UInt8(kept >> 8 & 0xFF), 0, 0])
        let riff = cut.count - 8
        cut.replaceSubrange(4..<8, with: [UInt8(riff & 0xFF), UInt8(riff >> 8 & 0xFF), 0, 0])
        return cut
    }

    @Test("lossy, lossless, alpha and animated WebP decode; truncated and corrupt ones are corrupt-image")
    func verdicts() async throws {
        let bodies = [
            "lossy.webp": ImageFixture.bytes("bands.webp"),
            "lossless.webp": ImageFixture.bytes("bands-lossless.webp"),
            "alpha.webp": ImageFixture.bytes("bands-alpha.webp"),
            "animated.webp": ImageFixture.bytes("animated.webp"),
            "truncated.webp": Array(ImageFixture.bytes("bands.webp").prefix(200)),
            "corrupt.webp": Self.bitstreamCutShort(),
        ]
        let full = try await verdicts(bodies, ["--verify", "full"])
        let structure = try await verdicts(bodies, ["--verify", "structure"])

        for name in ["lossy.webp", "lossless.webp", "alpha.webp", "animated.webp"] {
            #expect(full[name]?["status"] as? String == "downloaded", "\(name)")
            #expect(full[name]?["width"] as? Int == 400 && full[name]?["height"] as? Int == 200, "\(name)")
        }
        #expect(full["truncated.webp"]?["error"] as? String == "corrupt-image")
        #expect(full["corrupt.webp"]?["error"] as? String == "corrupt-image")
        #expect((full["corrupt.webp"]?["error_detail"] as? String)?.hasPrefix("webp decode failed") == true)
        // Only the decode sees the cut bitstream.
        #expect(structure["corrupt.webp"]?["status"] as? String == "downloaded")
    }

    @Test("a canvas over --max-pixels is too-many-pixels before libwebp decodes, animations included")
    func pixelLimit() async throws {
        let bodies = [
            "animated.webp": ImageFixture.bytes("animated.webp"), "lossy.webp": ImageFixture.bytes("bands.webp"),
        ]
        let results = try await verdicts(bodies, ["--verify", "full", "--max-pixels", "79999"])
        #expect(results["animated.webp"]?["error"] as? String == "too-many-pixels")
        #expect(results["lossy.webp"]?["error"] as? String == "too-many-pixels")
    }
}
