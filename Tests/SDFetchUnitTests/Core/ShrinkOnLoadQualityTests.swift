import Foundation
import Testing

@testable import SDFetchCore

/// Shrink-on-load must not cost sharpness: a JPEG full of fine detail, made into a
/// thumbnail, stays close to the Lanczos-3 resize of its full decode (the yardstick of the
/// thumbnail bench's quality columns), which a DCT scale that leaves the resampler less
/// than a 2x reduction does not.
@Suite("Shrink-on-load leaves the resampler twice the target")
struct ShrinkOnLoadQualityTests {
    /// Concentric rings whose frequency rises to one cycle in two pixels at the edges (a
    /// zone plate), a little shifted per channel: detail at every scale, as in a
    /// photograph's foliage or fabric, and what a block average aliases.
    private static func zonePlate() throws -> [UInt8] {
        try encoded(1024, 768, as: .jpeg) { x, y, channel in
            let dx = Double(x - 512 + channel * 7)
            let dy = Double(y - 384 - channel * 5)
            return Double.pi * (dx * dx + dy * dy) / 1024
        }
    }

    /// Diagonal stripes 31 pixels apart, a little shifted per channel: detail a thumbnail
    /// still shows, so any stretch of the image shows as a shift of its stripes.
    private static func stripes(_ width: Int, _ height: Int, as format: ResizeFormat = .png) throws -> [UInt8] {
        try encoded(width, height, as: format) { x, y, channel in
            2 * Double.pi * (Double(x) * 0.8 + Double(y) * 0.6 + Double(channel * 5)) / 31
        }
    }

    /// An image whose every sample is the cosine of `phase(x, y, channel)`, encoded.
    private static func encoded(
        _ width: Int, _ height: Int, as format: ResizeFormat, phase: (Int, Int, Int) -> Double
    ) throws -> [UInt8] {
        var data = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                for channel in 0..<3 {
                    data[(y * width + x) * 3 + channel] = UInt8(127.5 + 110 * cos(phase(x, y, channel)))
                }
            }
        }
        return try PixelEncoder.encode(
            Pixels(width: width, height: height, channels: 3, data: data), as: format, quality: 95
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

    /// `image`'s copy `size` px long (as PNG: no encoder loss) and its PSNR against the
    /// Lanczos-3 resize of `full`'s decode of the whole image to the copy's size.
    private static func copy(
        of image: [UInt8], size: Int, full: (PixelLease) throws -> Pixels
    ) throws -> (thumbnail: Pixels, psnr: Double) {
        var options = ResizeOptions(size: size)
        options.format = .png
        let budget = PixelBudget(capacity: 1 << 26)
        let copy = try ImageResizer(options: options, maxPixels: 1 << 26, budget: budget).resize(image).get()
        let lease = PixelLease(budget)
        defer { lease.end() }
        let thumbnail = try PNGPixels.decode(copy.bytes, maxPixels: 1 << 26, lease: lease).get()
        let referenceLease = PixelLease(budget)
        defer { referenceLease.end() }
        let whole = try full(referenceLease)
        let reference = Resampler.resample(
            whole, box: Resampler.Box(x: 0, y: 0, width: Double(whole.width), height: Double(whole.height)),
            width: thumbnail.width, height: thumbnail.height)
        return (thumbnail, psnr(thumbnail, reference))
    }

    private static func jpegDecode(_ jpeg: [UInt8]) -> (PixelLease) throws -> Pixels {
        { lease in try JPEGPixels.decode(jpeg, denominator: 1, maxPixels: 1 << 26, lease: lease).get() }
    }

    @Test("a 1024x768 zone plate at 80 px is within reach of the full decode's Lanczos-3 resize")
    func nearTheFullDecode() throws {
        let jpeg = try Self.zonePlate()
        let (thumbnail, quality) = try Self.copy(of: jpeg, size: 80, full: Self.jpegDecode(jpeg))

        // 46.4 dB decoded at 1/4 (a 3.2x reduction left to Lanczos-3); 39.9 dB at 1/8 (1.6x).
        #expect((thumbnail.width, thumbnail.height) == (80, 60))
        #expect(quality > 44, "PSNR \(quality) dB against the full decode's Lanczos-3")
    }

    @Test("a PNG box-shrunk by 3 keeps its geometry though 643 rows are no multiple of 3")
    func boxShrinkGeometry() throws {
        let png = try Self.stripes(960, 643)
        let (thumbnail, quality) = try Self.copy(of: png, size: 128) { lease in
            try PNGPixels.decode(png, maxPixels: 1 << 26, lease: lease).get()
        }

        // 46.5 dB; 33.1 dB when the 214 shrunk rows were taken for all 643 / 3 = 214.3.
        #expect((thumbnail.width, thumbnail.height) == (128, 86))
        #expect(quality > 42, "PSNR \(quality) dB against the full decode's Lanczos-3")
    }

    @Test("a JPEG decoded at 1/2 keeps its geometry though 1365 columns make 683 pixels at that scale")
    func dctScaleGeometry() throws {
        let jpeg = try Self.stripes(1365, 1074, as: .jpeg)
        let (thumbnail, quality) = try Self.copy(of: jpeg, size: 256, full: Self.jpegDecode(jpeg))

        // 47.0 dB; 30.6 dB when the 683 decoded columns were taken for all 1365 / 2 = 682.5.
        #expect((thumbnail.width, thumbnail.height) == (256, 201))
        #expect(quality > 42, "PSNR \(quality) dB against the full decode's Lanczos-3")
    }
}
