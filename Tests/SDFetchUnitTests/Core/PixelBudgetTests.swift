import SDFetchTestSupport
import Synchronization
import Testing

@testable import SDFetchCore

/// SDFetchCore.docc, Security, "Pixel budget": resizes in flight share one budget, and an
/// animation's canvas is made shrunk around its first frame, never at full size. The bombs
/// come from ``CanvasBombs``; `CanvasBombMemoryTests` runs them through the binary.
@Suite("Pixel budget and canvases", .timeLimit(.minutes(1)))
struct PixelBudgetTests {
    private func resizer(_ size: Int, budget: PixelBudget, mode: ResizeMode = .longer) -> ImageResizer {
        var options = ResizeOptions(size: size)
        options.mode = mode
        options.format = .png
        return ImageResizer(options: options, maxPixels: 100_000_000, budget: budget)
    }

    @Test(
        "a frame placed on a shrunk canvas is the whole canvas box-shrunk",
        arguments: [(1, 0, 0), (2, 3, 1), (3, 0, 5), (4, 7, 2), (5, 10, 10), (16, 1, 0)])
    func placedEqualsShrunk(factor: Int, left: Int, top: Int) {
        let canvas = PixelSize(width: 23, height: 17)
        let frame = Pixels(
            width: 9, height: 11, channels: 4, data: (0..<(9 * 11 * 4)).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) })
        var whole = [UInt8](repeating: 0, count: canvas.width * canvas.height * 4)
        for y in 0..<frame.height where top + y < canvas.height {
            for x in 0..<frame.width where left + x < canvas.width {
                for channel in 0..<4 {
                    let source = (y * frame.width + x) * 4 + channel
                    whole[((top + y) * canvas.width + left + x) * 4 + channel] = frame.data[source]
                }
            }
        }
        let expected = BoxShrink.shrink(
            Pixels(width: canvas.width, height: canvas.height, channels: 4, data: whole), by: factor)
        let placed = CanvasShrink.place(frame, left: left, top: top, on: canvas, factor: factor)
        #expect((placed.width, placed.height) == (expected.width, expected.height))
        #expect(placed.data == expected.data)
    }

    @Test(
        "a tiny image declaring a 10000x10000 canvas makes its copy holding a few thousand pixels",
        arguments: [("gif", CanvasBombs.gif()), ("animated webp", CanvasBombs.animatedWebP())])
    func canvasNeverMade(name: String, bomb: [UInt8]) throws {
        let budget = PixelBudget(capacity: 1 << 26)
        let copy = try resizer(64, budget: budget).resize(bomb).get()
        #expect((copy.width, copy.height) == (64, 64))
        // The canvas shrunk 78 times (128x128) and the 1x1 frame; made whole it would take 100 M.
        #expect(budget.peakInUse < 20_000, "\(name): \(budget.peakInUse) pixels held")
    }

    @Test("a one-colour lossless WebP of 9000x9000 pixels is decoded scaled, holding libwebp's image alone")
    func losslessScaled() throws {
        let budget = PixelBudget(capacity: 1 << 30)
        let copy = try resizer(64, budget: budget).resize(CanvasBombs.losslessWebP()).get()
        #expect((copy.width, copy.height) == (64, 64))
        #expect(budget.peakInUse < 81_000_000 + 100_000, "\(budget.peakInUse) pixels held")
    }

    @Test("resizes on many threads never hold more than the budget, and all of them finish")
    func budgetHolds() async {
        // Each 300x300 PNG takes 90,000 pixels; the budget fits two.
        let budget = PixelBudget(capacity: 200_000)
        let resizer = resizer(32, budget: budget)
        let images = (0..<4).map { SampleImages.png(width: 300, height: 300, seed: $0) }
        let made = Count()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    await onOwnThread {
                        for image in images where (try? resizer.resize(image).get()) != nil {
                            made.value.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
        }
        #expect(made.value.load(ordering: .relaxed) == 24)
        #expect(budget.peakInUse <= 200_000)
        #expect(budget.peakInUse >= 90_000)
    }

    @Test("an image larger than the whole budget but within --max-pixels still runs, alone")
    func largerThanBudget() throws {
        let budget = PixelBudget(capacity: 10_000)
        let copy = try resizer(16, budget: budget).resize(SampleImages.png(width: 300, height: 300, seed: 1)).get()
        #expect((copy.width, copy.height) == (16, 16))
        #expect(budget.peakInUse == 10_000)
    }

    final class Count: Sendable {
        let value = Atomic<Int>(0)
    }
}
