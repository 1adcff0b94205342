/// Decoded 8-bit pixels, rows top to bottom without padding: RGB (3 channels) or RGBA with
/// straight, not premultiplied, alpha (4). What the decoders make, the resampler reads and
/// writes, and the encoders take.
struct Pixels {
    var width: Int
    var height: Int
    var channels: Int
    var data: [UInt8]

    init(width: Int, height: Int, channels: Int, data: [UInt8]) {
        precondition(data.count == width * height * channels, "pixel data matches its size")
        self.width = width
        self.height = height
        self.channels = channels
        self.data = data
    }

    var hasAlpha: Bool { channels == 4 }

    /// The same image without its alpha channel when every pixel is opaque (most PNGs and
    /// GIFs with an alpha channel or a transparent colour never use it): a third fewer bytes
    /// to resample, and a JPEG copy needs no flattening.
    func droppingOpaqueAlpha() -> Pixels {
        guard hasAlpha else { return self }
        let isOpaque = data.withUnsafeBufferPointer { bytes in
            stride(from: 3, to: bytes.count, by: 4).allSatisfy { bytes[$0] == 255 }
        }
        return isOpaque ? flattened(on: [0, 0, 0]) : self
    }

    /// RGB over `background` (red, green, blue): each pixel blended by its alpha.
    func flattened(on background: [UInt8]) -> Pixels {
        guard hasAlpha else { return self }
        let count = width * height
        var rgb = [UInt8](repeating: 0, count: count * 3)
        data.withUnsafeBufferPointer { source in
            rgb.withUnsafeMutableBufferPointer { target in
                for pixel in 0..<count {
                    let alpha = Int(source[pixel * 4 + 3])
                    for channel in 0..<3 {
                        let value = Int(source[pixel * 4 + channel]) * alpha + Int(background[channel]) * (255 - alpha)
                        target[pixel * 3 + channel] = UInt8((value + 127) / 255)
                    }
                }
            }
        }
        return Pixels(width: width, height: height, channels: 3, data: rgb)
    }
}
