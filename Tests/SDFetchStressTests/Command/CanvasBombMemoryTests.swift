import Foundation
import SDFetchTestSupport
import Testing

/// `-o DIR --resize` and `--verify full` on tiny images declaring huge canvases
/// (``CanvasBombs``), through the binary: decodes share one pixel budget and no resize makes
/// a canvas whole (SDFetchCore.docc, Security, "Pixel budget"). Naively each GIF took 405
/// MiB and each animated WebP 1,167.
@Suite("memory with canvas bombs", .cleansUp, .timeLimit(.minutes(2)))
struct CanvasBombMemoryTests {
    let directory = TemporaryDirectory("canvas-bombs")

    /// Serves `bombs` (path, bytes), fetches them at once with `--resize 64` (or `options`),
    /// and returns the run with its peak memory and each path's JSON line.
    private func run(
        _ bombs: [(String, [UInt8])],
        options: [String] = ["-o", "out", "--resize", "64", "--resize-format", "png"]
    ) async throws -> (PeakMemoryRun, [String: String]) {
        let server = try await LoopbackServer()
        for (path, bytes) in bombs { server.route(path, .ok(bytes)) }
        let list = directory.write(bombs.map { server.url($0.0) }.joined(separator: "\n"), to: "list.txt")
        let options = options.map { $0 == "out" ? directory.appending("out") : $0 }
        let measured = try await PeakMemoryRun.launch(
            BuiltProduct.path("sdfetch"),
            ["--no-config", "--json", "-j", "\(bombs.count)", "--cache-dir", directory.appending("cache")] + options
                + [list],
            report: directory.appending("peak.txt"))
        var lines: [String: String] = [:]
        for line in measured.run.standardOutput.split(separator: "\n") {
            if let path = bombs.map(\.0).first(where: { line.contains($0 + "\"") }) { lines[path] = String(line) }
        }
        return (measured, lines)
    }

    /// The run ended 0 with every bomb `downloaded`, and with its `-o` file when `placed`.
    private func expectDownloaded(
        _ bombs: [(String, [UInt8])], _ measured: PeakMemoryRun, _ lines: [String: String], placed: Bool
    ) {
        #expect(measured.run.status == 0)
        for (path, _) in bombs {
            let line = lines[path] ?? "no line"
            let isPlaced = !placed || line.contains("\"path\":")
            #expect(line.contains("\"status\":\"downloaded\"") && isPlaced, "\(path): \(line)")
        }
    }

    @Test("three 43-byte GIFs and three 86-byte animated WebPs of 10000x10000 canvases peak under 150 MB")
    func gifAndAnimatedWebP() async throws {
        let bombs =
            (0..<3).map { ("/screen-\($0).gif", CanvasBombs.gif()) }
            + (0..<3).map { ("/canvas-\($0).webp", CanvasBombs.animatedWebP()) }
        #expect(CanvasBombs.gif().count == 43)
        let (measured, lines) = try await run(bombs)

        expectDownloaded(bombs, measured, lines, placed: true)
        // The process alone is about 35 MB; one canvas made whole is 400 MB.
        #expect(measured.peakKiB < 150 << 10, "peak RSS \(measured.peakKiB) KiB")
    }

    @Test("four 30-byte lossless WebPs of 9000x9000 pixels are decoded scaled and one at a time")
    func losslessStills() async throws {
        let bombs = (0..<4).map { ("/still-\($0).webp", CanvasBombs.losslessWebP()) }
        let (measured, lines) = try await run(bombs)

        expectDownloaded(bombs, measured, lines, placed: true)
        // libwebp's ARGB image is 324 MB (81 M pixels, over the 64 Mi-pixel budget: alone);
        // two at once, or each with a full-size RGB copy beside it, would pass 600 MB.
        #expect(measured.peakKiB < 450 << 10, "peak RSS \(measured.peakKiB) KiB")
    }

    @Test("--verify full: four 86-byte animated WebPs of 10000x10000 canvases decode with no canvas")
    func fullVerificationShareTheBudget() async throws {
        let bombs = (0..<4).map { ("/verified-\($0).webp", CanvasBombs.animatedWebP()) }
        let (measured, lines) = try await run(bombs, options: ["--verify", "full"])

        expectDownloaded(bombs, measured, lines, placed: false)
        // libwebp's animation decoder held two canvases, 800 MB; two decodes at once (one per
        // core) peaked at 1.6 GB. Frame by frame, a 1x1 frame costs nothing.
        #expect(measured.peakKiB < 150 << 10, "peak RSS \(measured.peakKiB) KiB")
    }
}
