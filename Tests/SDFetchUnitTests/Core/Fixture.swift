import Foundation

/// Loads the small real files in `Fixtures/`, made by `Scripts/make-fixtures.sh`.
enum Fixture {
    /// The bytes of `Fixtures/name`; a missing fixture is a broken checkout, so it traps.
    static func bytes(_ name: String) -> [UInt8] {
        guard let directory = Bundle.module.resourceURL?.appendingPathComponent("Fixtures"),
            let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
        else { preconditionFailure("fixture \(name) missing: run Scripts/make-fixtures.sh") }
        return [UInt8](data)
    }

    /// Every fixture that is a good image, with its format and exact declared size
    /// (nil where the format's header states none).
    static let goodImages: [(name: String, format: String, width: Int?, height: Int?)] = [
        ("tiny-rgba.png", "png", 3, 2),
        ("baseline.jpg", "jpeg", 17, 9),
        ("progressive.jpg", "jpeg", 17, 9),
        ("arithmetic.jpg", "jpeg", 17, 9),
        ("restarts.jpg", "jpeg", 64, 48),
        ("two-frames.gif", "gif", 5, 4),
        ("tiny.webp", "webp", 7, 5),
        ("tiny-lossless.webp", "webp", 9, 3),
        ("tiny-alpha.webp", "webp", 6, 4),
        ("tiny.bmp", "bmp", 6, 3),
        ("tiny.tiff", "tiff", 4, 7),
        ("tiny-msb.tiff", "tiff", 4, 7),
        ("tiny.ico", "ico", 16, 16),
        ("tiny.heic", "heic", 8, 6),
        ("tiny.avif", "avif", 8, 6),
        ("tiny.jxl", "jxl", 8, 6),
        ("tiny-container.jxl", "jxl", 8, 6),
        ("tiny.svg", "svg", 24, 12),
        ("viewbox.svg", "svg", 30, 20),
        ("tiny.pdf", "pdf", nil, nil),
    ]

    /// `bytes` with the big-endian 16-bit value at `offset` replaced.
    static func patching(_ bytes: [UInt8], uint16BE value: UInt16, at offset: Int) -> [UInt8] {
        var copy = bytes
        copy[offset] = UInt8(value >> 8)
        copy[offset + 1] = UInt8(value & 0xFF)
        return copy
    }

    /// The offset of the first occurrence of `pattern`, which the test knows is there.
    static func offset(of pattern: [UInt8], in bytes: [UInt8]) -> Int {
        guard
            let index = (0...(bytes.count - pattern.count)).first(where: {
                bytes[$0..<$0 + pattern.count].elementsEqual(pattern)
            })
        else { preconditionFailure("pattern not in fixture") }
        return index
    }
}
