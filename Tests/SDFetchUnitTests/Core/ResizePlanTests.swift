import Testing

@testable import SDFetchCore

@Suite("Resize geometry, shrink-on-load scale and EXIF orientation")
struct ResizePlanTests {
    private func plan(_ width: Int, _ height: Int, _ size: Int, _ mode: ResizeMode) -> ResizePlan {
        var options = ResizeOptions(size: size)
        options.mode = mode
        return ResizePlan(sourceWidth: width, sourceHeight: height, options: options)
    }

    @Test("each mode's output and canvas for a 4000x3000 photo at 256")
    func modes() {
        #expect((plan(4000, 3000, 256, .longer).width, plan(4000, 3000, 256, .longer).height) == (256, 192))
        #expect((plan(4000, 3000, 256, .shorter).width, plan(4000, 3000, 256, .shorter).height) == (341, 256))
        let crop = plan(4000, 3000, 256, .crop)
        #expect((crop.width, crop.height, crop.canvasWidth) == (256, 256, 256))
        #expect(abs(crop.box.width - 0.75) < 1e-9 && abs(crop.box.x - 0.125) < 1e-9 && crop.box.height == 1)
        let pad = plan(4000, 3000, 256, .pad)
        #expect((pad.width, pad.height, pad.canvasWidth, pad.canvasHeight) == (256, 192, 256, 256))
        #expect((plan(4000, 3000, 256, .none).width, plan(4000, 3000, 256, .none).height) == (4000, 3000))
    }

    @Test("the DCT scale is the smallest that still leaves twice the target")
    func shrinkOnLoadScale() {
        #expect(JPEGPixels.denominator(forScale: plan(4000, 3000, 256, .longer).scale) == 4)
        #expect(JPEGPixels.denominator(forScale: plan(8000, 6000, 256, .longer).scale) == 8)
        #expect(JPEGPixels.denominator(forScale: plan(1100, 800, 256, .longer).scale) == 2)
        #expect(JPEGPixels.denominator(forScale: plan(1000, 800, 256, .longer).scale) == 1)
        #expect(JPEGPixels.denominator(forScale: plan(600, 400, 256, .crop).scale) == 1)
        #expect(JPEGPixels.denominator(forScale: 0.125) == 4)
    }

    @Test("orientation 6 turns a 3x2 image a quarter clockwise")
    func orientation() {
        let stored = Pixels(width: 3, height: 2, channels: 3, data: (0..<18).map { UInt8($0) })
        let upright = stored.oriented(.right)
        #expect((upright.width, upright.height) == (2, 3))
        // The stored bottom-left pixel (index 3) is shown top left.
        #expect(Array(upright.data[0..<3]) == [9, 10, 11])
    }

    @Test("Lanczos-3 keeps a flat colour flat and averages a fine pattern to its mean")
    func resampler() {
        let flat = Pixels(width: 40, height: 20, channels: 3, data: [UInt8](repeating: 77, count: 2400))
        let small = Resampler.resample(flat, box: .init(x: 0, y: 0, width: 40, height: 20), width: 10, height: 5)
        #expect(small.data.allSatisfy { $0 == 77 })
        let stripes = Pixels(width: 64, height: 4, channels: 3, data: (0..<768).map { ($0 / 3) % 2 == 0 ? 0 : 200 })
        let averaged = Resampler.resample(stripes, box: .init(x: 0, y: 0, width: 64, height: 4), width: 8, height: 1)
        // Outputs 3 and 4 see the whole kernel (24 samples either side); at the edges it is cut.
        #expect(averaged.data[9..<15].allSatisfy { abs(Int($0) - 100) <= 2 })
    }
}
