/// The EXIF `Orientation` tag (0x0112) of an image: how its stored pixels must be turned
/// to be seen upright, as browsers do (CSS `image-orientation: from-image`).
///
/// Read from a JPEG's APP1 `Exif` segment, a WebP's `EXIF` chunk or a PNG's `eXIf` chunk:
/// a TIFF header and its first IFD (TIFF 6.0, section 2; EXIF 2.32, section 4.6.4). Any
/// damage reads as upright: broken EXIF never fails an image. Pure; safe from any thread.
enum ExifOrientation: Int {
    case up = 1
    case mirrored, upsideDown, upsideDownMirrored, leftMirrored, right, rightMirrored, left

    /// Whether width and height trade places (orientations 5-8).
    var swapsSides: Bool { rawValue >= 5 }

    static func read(_ bytes: [UInt8], format: ImageFormat) -> ExifOrientation {
        bytes.withUnsafeBytes { data in
            let tiff: Range<Int>?
            switch format {
            case .jpeg: tiff = jpegExif(data)
            case .webp: tiff = chunk("EXIF", in: data, from: 12, littleEndian: true)
            case .png: tiff = chunk("eXIf", in: data, from: 8, littleEndian: false)
            default: tiff = nil
            }
            return tiff.flatMap { orientation(in: data, tiff: $0) } ?? .up
        }
    }

    /// The TIFF data of the first APP1 `Exif\0\0` segment before the first scan.
    private static func jpegExif(_ data: UnsafeRawBufferPointer) -> Range<Int>? {
        var offset = 2
        while offset + 4 <= data.count, data[offset] == 0xFF {
            let marker = data[offset + 1]
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(data[offset + 2]) << 8 | Int(data[offset + 3])
            let end = offset + 2 + length
            guard length >= 2, end <= data.count else { return nil }
            if marker == 0xE1, length >= 8, data.matches("Exif", at: offset + 4) { return (offset + 10)..<end }
            offset = end
        }
        return nil
    }

    /// The payload of the first chunk named `name` (RIFF chunks are little-endian sized,
    /// PNG's big-endian, with a type after the length and a CRC after the data).
    private static func chunk(
        _ name: StaticString, in data: UnsafeRawBufferPointer, from start: Int, littleEndian: Bool
    )
        -> Range<Int>?
    {
        var offset = start
        while offset + 8 <= data.count {
            let size: Int
            let type: Int
            if littleEndian {
                guard let value = data.uint32LE(at: offset + 4) else { return nil }
                (size, type) = (Int(value), offset)
            } else {
                guard let value = data.uint32BE(at: offset) else { return nil }
                (size, type) = (Int(value), offset + 4)
            }
            let payload = offset + 8
            guard payload + size <= data.count else { return nil }
            if data.matches(name, at: type) { return payload..<(payload + size) }
            offset = payload + size + (littleEndian ? size & 1 : 4)
        }
        return nil
    }

    /// Tag 0x0112 of IFD0, a SHORT from 1 to 8.
    private static func orientation(in data: UnsafeRawBufferPointer, tiff: Range<Int>) -> ExifOrientation? {
        let base = tiff.lowerBound
        guard tiff.count >= 8 else { return nil }
        let isLittle = data[base] == 0x49 && data[base + 1] == 0x49
        guard isLittle || (data[base] == 0x4D && data[base + 1] == 0x4D) else { return nil }
        func u16(_ at: Int) -> Int? {
            guard at >= base, at + 2 <= tiff.upperBound else { return nil }
            return isLittle ? Int(data[at]) | Int(data[at + 1]) << 8 : Int(data[at]) << 8 | Int(data[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let low = u16(isLittle ? at : at + 2), let high = u16(isLittle ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
        guard let ifd = u32(base + 4), let entries = u16(base + ifd) else { return nil }
        for entry in 0..<min(entries, 512) {
            let at = base + ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            if tag == 0x0112 { return u16(at + 8).flatMap(ExifOrientation.init(rawValue:)) }
        }
        return nil
    }
}

extension Pixels {
    /// The pixels turned upright by `orientation`.
    func oriented(_ orientation: ExifOrientation) -> Pixels {
        guard orientation != .up else { return self }
        let (outWidth, outHeight) = orientation.swapsSides ? (height, width) : (width, height)
        var out = [UInt8](repeating: 0, count: data.count)
        let channels = self.channels
        let (w, h) = (width, height)
        data.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for y in 0..<outHeight {
                    for x in 0..<outWidth {
                        // The stored pixel shown at (x, y).
                        let (sx, sy): (Int, Int)
                        switch orientation {
                        case .up: (sx, sy) = (x, y)
                        case .mirrored: (sx, sy) = (w - 1 - x, y)
                        case .upsideDown: (sx, sy) = (w - 1 - x, h - 1 - y)
                        case .upsideDownMirrored: (sx, sy) = (x, h - 1 - y)
                        case .leftMirrored: (sx, sy) = (y, x)
                        case .right: (sx, sy) = (y, h - 1 - x)
                        case .rightMirrored: (sx, sy) = (w - 1 - y, h - 1 - x)
                        case .left: (sx, sy) = (w - 1 - y, x)
                        }
                        let from = (sy * w + sx) * channels
                        let to = (y * outWidth + x) * channels
                        for channel in 0..<channels { target[to + channel] = source[from + channel] }
                    }
                }
            }
        }
        return Pixels(width: outWidth, height: outHeight, channels: channels, data: out)
    }
}
