import Foundation
@testable import SDFetchCore
import Testing

/// Shrink-on-load must not cost sharpness: a JPEG full of fine detail, made into a
/// thumbnail, stays close to the Lanczos-3 resize of its full decode (the yardstick of the
/// thumbnail bench's quality columns), which a DCT scale that leaves the resampler less
/// than a 2x reduction does not.
@Suite("Shrink-on-load leaves the resampler twice the target")
struct ShrinkOnLoadQualityTests {
    /// 1024x768 of concentric rings whose frequency rises to one cycle in two pixels at the
    /// edges (a zone plate), a little shifted per channel: detail at every scale, as in a
    /// photograph's foliage or fabric, and what a block average aliases.
    private static func zonePlate() throws -> [UInt8] {
        let (width, height) = (1024, 768)
        var data = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                for channel in 0..<3 {
                    let dx = Double(x - width / 2 + channel * 7)
                    let dy = Double(y - height / 2 - channel * 5)
                    let phase = Double.pi * (dx * dx + dy * dy) / Double(width)
                    data[(y * width + x) * 3 + channel] = UInt8(127.5 + 110 * cos(phase))
                }
            }
        }
        return try PixelEncoder.encode(
            Pixels(width: width, height: height, channels: 3, data: data), as: .jpeg, quality: 95
        ).get()
    }

    private static func psnr(_ a: Pixels, _ b: Pixels) -> Double {
        precondition(a.data.count == b.data.count, "same size")
        let squared = zip(a.data, b.data).reduce(0.0) { sum, pair in
            let difference = Double(pair.0) - Double(pair.1)
            return sum + difference * difference
        }
        return 10 * log10(255 * 255 / (squared / Double(a.data.count)))
    }

    @Test("a 1024x768 zone plate at 80 px is within reach of the full decode's Lanczos-3 resize")
    func nearTheFullDecode() throws {
        let jpeg = try Self.zonePlate()
        var options = ResizeOptions(size: 80)
        options.format = .png
        let budget = PixelBudget(capacity: 1 << 26)
        let copy = try ImageResizer(options: options, maxPixels: 1 << 26, budget: budget).resize(jpeg).get()
        let lease = PixelLease(budget)
        defer { lease.end() }
        let thumbnail = try PNGPixels.decode(copy.bytes, maxPixels: 1 << 26, lease: lease).get()
        let referenceLease = PixelLease(budget)
        defer { referenceLease.end() }
        let full = try JPEGPixels.decode(jpeg, denominator: 1, maxPixels: 1 << 26, lease: referenceLease).get()
        let reference = Resampler.resample(
            full, box: Resampler.Box(x: 0, y: 0, width: 1024, height: 768), width: 80, height: 60)

        let quality = Self.psnr(thumbnail, reference)
        #expect((thumbnail.width, thumbnail.height) == (80, 60))
        // 46.4 dB decoded at 1/4 (a 3.2x reduction left to Lanczos-3); 39.9 dB at 1/8 (1.6x).
        #expect(quality > 44, "PSNR \(quality) dB against the full decode's Lanczos-3")
    }
}
