import Foundation

@testable import SDFetchCore

/// The resize and WebP fixtures in `Fixtures/` (made by `Scripts/make-resize-fixtures.py`)
/// and a look at the pixels of sdfetch's output files, decoded by the same libraries.
enum ImageFixture {
    /// The bytes of `Fixtures/name`; a missing fixture is a broken checkout, so it traps.
    static func bytes(_ name: String) -> [UInt8] {
        guard let directory = Bundle.module.resourceURL?.appendingPathComponent("Fixtures"),
            let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
        else { preconditionFailure("fixture \(name) missing: run Scripts/make-resize-fixtures.py") }
        return [UInt8](data)
    }

    /// A decoded output file: its size and pixels.
    struct Decoded {
        let pixels: Pixels
        let format: ImageFormat
        var width: Int { pixels.width }
        var height: Int { pixels.height }
        var hasAlpha: Bool { pixels.hasAlpha }

        /// Red, green, blue (and alpha, when the file has it) at `x`, `y`.
        func at(_ x: Int, _ y: Int) -> [UInt8] {
            let start = (y * pixels.width + x) * pixels.channels
            return Array(pixels.data[start..<start + pixels.channels])
        }

        /// Whether the pixel at `x`, `y` is within `tolerance` of `rgb` in every colour channel.
        func isColour(_ rgb: [Int], at x: Int, _ y: Int, tolerance: Int = 40) -> Bool {
            zip(at(x, y).prefix(3), rgb).allSatisfy { abs(Int($0) - $1) <= tolerance }
        }
    }

    /// The file at `path` decoded at full scale, or nil when it is no JPEG, PNG or WebP.
    static func decode(file path: String) -> Decoded? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let bytes = [UInt8](data)
        let format = ImageFormat.sniff(bytes)
        let decoded: Result<Pixels, FetchFailure>
        // A budget of its own: the test's decodes wait for no one.
        let lease = PixelLease(PixelBudget(capacity: 1 << 30))
        defer { lease.end() }
        switch format {
        case .jpeg: decoded = JPEGPixels.decode(bytes, denominator: 1, maxPixels: 1 << 30, lease: lease)
        case .png: decoded = PNGPixels.decode(bytes, maxPixels: 1 << 30, lease: lease)
        case .webp: decoded = WebPPixels.decode(bytes, maxPixels: 1 << 30, lease: lease, shrink: { _ in 1 })
        default: return nil
        }
        guard case .success(let pixels) = decoded, let format else { return nil }
        return Decoded(pixels: pixels, format: format)
    }

    static let red = [255, 0, 0]
    static let green = [0, 255, 0]
    static let blue = [0, 0, 255]
    static let white = [255, 255, 255]
}
