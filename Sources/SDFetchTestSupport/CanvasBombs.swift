/// Tiny images declaring huge canvases, built byte by byte: each is valid, within the
/// default `--max-pixels`, and decoded naively costs hundreds of megabytes
/// (SDFetchCore.docc, Security, "Pixel budget"). `Scripts/fuzz-seeds.py` builds the same.
public enum CanvasBombs {
    /// A GIF89a whose logical screen is `width` x `height` around one 1x1 frame at the
    /// top left (43 bytes): the screen alone is 400 MB as RGBA at 10000x10000.
    public static func gif(width: UInt16 = 10000, height: UInt16 = 10000) -> [UInt8] {
        var bytes = Array("GIF89a".utf8) + littleEndian16(width) + littleEndian16(height)
        bytes += [0x80, 0, 0]  // a global colour table of 2 colours; background 0; no aspect
        bytes += [0, 0, 0, 255, 255, 255]
        bytes += [0x21, 0xF9, 4, 0, 0, 0, 0, 0]  // a graphic control extension, nothing set
        bytes += [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0]  // the 1x1 frame at (0, 0)
        // LZW, 2-bit minimum code size, 3-bit codes packed from the low bit: clear (4),
        // colour 1, end (5) (GIF89a appendix F).
        bytes += [2, 2, 0x4C, 0x01, 0]
        return bytes + [0x3B]
    }

    /// A lossless WebP still of `width` x `height` pixels of one colour (30 bytes): every
    /// prefix code has one symbol, so no pixel costs a bit; libwebp still decodes it to a
    /// full ARGB image.
    public static func losslessWebP(width: Int = 9000, height: Int = 9000) -> [UInt8] {
        riff([chunk("VP8L", oneColourVP8L(width: width, height: height))])
    }

    /// An animated WebP of one 1x1 frame on a `width` x `height` canvas (86 bytes):
    /// libwebp's animation decoder holds two canvases of 400 MB each at 10000x10000.
    public static func animatedWebP(width: Int = 10000, height: Int = 10000) -> [UInt8] {
        let vp8x = [0x02, 0, 0, 0] + littleEndian24(width - 1) + littleEndian24(height - 1)  // animation flag
        let frame =
            littleEndian24(0) + littleEndian24(0) + littleEndian24(0) + littleEndian24(0) + littleEndian24(100) + [0]
            + chunk("VP8L", oneColourVP8L(width: 1, height: 1))
        return riff([chunk("VP8X", vp8x), chunk("ANIM", [0, 0, 0, 0, 0, 0]), chunk("ANMF", frame)])
    }

    // MARK: - Pieces

    /// A VP8L bitstream (WebP lossless format, sections 3-6): header, no transform, no
    /// colour cache, one group of five simple prefix codes of one symbol each (opaque red).
    private static func oneColourVP8L(width: Int, height: Int) -> [UInt8] {
        var bits: [(value: Int, count: Int)] = [(0x2F, 8), (width - 1, 14), (height - 1, 14), (0, 1), (0, 3)]
        bits += [(0, 1), (0, 1), (0, 1)]  // no transform, no colour cache, no meta prefix codes
        for symbol in [0, 255, 0, 255, 0] {  // green, red, blue, alpha, distance
            bits += symbol < 2 ? [(1, 1), (0, 1), (0, 1), (symbol, 1)] : [(1, 1), (0, 1), (1, 1), (symbol, 8)]
        }
        var bytes: [UInt8] = []
        var (accumulator, filled) = (0, 0)
        for (value, count) in bits {
            for bit in 0..<count {
                accumulator |= (value >> bit & 1) << filled
                filled += 1
                if filled == 8 {
                    bytes.append(UInt8(accumulator))
                    (accumulator, filled) = (0, 0)
                }
            }
        }
        return filled > 0 ? bytes + [UInt8(accumulator)] : bytes
    }

    private static func riff(_ chunks: [[UInt8]]) -> [UInt8] {
        let body = Array("WEBP".utf8) + chunks.flatMap { $0 }
        return Array("RIFF".utf8) + littleEndian32(body.count) + body
    }

    private static func chunk(_ tag: String, _ data: [UInt8]) -> [UInt8] {
        Array(tag.utf8) + littleEndian32(data.count) + data + (data.count % 2 == 1 ? [0] : [])
    }

    private static func littleEndian16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    private static func littleEndian24(_ value: Int) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF)]
    }

    private static func littleEndian32(_ value: Int) -> [UInt8] { littleEndian24(value) + [UInt8(value >> 24 & 0xFF)] }
}
