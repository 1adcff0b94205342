import CZlib

/// Images built byte by byte for the verification tests: valid files of kinds the
/// fixtures lack (interlaced, APNG) and the hostile ones of `DecodeBudgetTests`
/// (inflate and JPEG scan bombs). Each builder says which rule it serves.
enum CraftedImages {
    // MARK: - PNG

    /// One PNG chunk: length, type, data, CRC-32 over type and data (PNG spec 5.3).
    static func pngChunk(_ type: String, _ data: [UInt8], crcFlip: UInt32 = 0) -> [UInt8] {
        let body = Array(type.utf8) + data
        let crc = UInt32(body.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) }) ^ crcFlip
        return bigEndian32(UInt32(data.count)) + body + bigEndian32(crc)
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// IHDR data for an 8-bit image of `colourType` (2 RGB, 6 RGBA, 0 grey).
    static func ihdr(width: UInt32, height: UInt32, colourType: UInt8 = 2, interlaced: Bool = false) -> [UInt8] {
        bigEndian32(width) + bigEndian32(height) + [8, colourType, 0, 0, interlaced ? 1 : 0]
    }

    /// An 8-bit RGB PNG whose image data is `rawBytes` zero bytes (black rows, filter
    /// byte 0), compressed by zlib. `between` goes between IHDR and IDAT; `after` after IEND.
    static func png(
        width: UInt32, height: UInt32, interlaced: Bool = false, rawBytes: Int? = nil,
        between: [UInt8] = [], after: [UInt8] = []
    ) -> [UInt8] {
        let expected = rawBytes ?? rgbImageDataBytes(width: Int(width), height: Int(height), interlaced: interlaced)
        return pngSignature + pngChunk("IHDR", ihdr(width: width, height: height, interlaced: interlaced)) + between
            + pngChunk("IDAT", deflateZeros(count: expected)) + pngChunk("IEND", []) + after
    }

    /// Filtered image data size of an 8-bit RGB image: rows of 1 + 3 x width bytes, for
    /// each of the seven Adam7 passes when interlaced (PNG spec 8.2).
    static func rgbImageDataBytes(width: Int, height: Int, interlaced: Bool) -> Int {
        guard interlaced else { return height * (1 + 3 * width) }
        let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        return passes.reduce(0) { total, pass in
            let columns = max(0, (width - pass.0 + pass.2 - 1) / pass.2)
            let rows = max(0, (height - pass.1 + pass.3 - 1) / pass.3)
            return total + (columns == 0 || rows == 0 ? 0 : rows * (1 + 3 * columns))
        }
    }

    /// A zlib stream of `count` zero bytes, compressed a megabyte at a time.
    static func deflateZeros(count: Int) -> [UInt8] {
        var stream = z_stream()
        precondition(deflateInit_(&stream, 9, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { deflateEnd(&stream) }
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var remaining = count
        repeat {
            let length = min(remaining, zeros.count)
            remaining -= length
            let flush = remaining == 0 ? Z_FINISH : Z_NO_FLUSH
            zeros.withUnsafeBufferPointer { input in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = UInt32(length)
                repeat {
                    chunk.withUnsafeMutableBufferPointer { out in
                        stream.next_out = out.baseAddress
                        stream.avail_out = UInt32(out.count)
                        _ = deflate(&stream, flush)
                        output += out[0..<(out.count - Int(stream.avail_out))]
                    }
                } while stream.avail_out == 0
            }
        } while remaining > 0
        return output
    }

    // MARK: - JPEG

    /// A progressive 1-component JPEG of `width` x `height` whose `scans` AC scans each
    /// cover every block with end-of-band runs (ITU T.81 G.1.2.2): a few dozen bytes per
    /// scan, but each scan makes the decoder visit every block. Issue 16's scan bomb.
    /// With `components` > 1 the frame declares that many full-resolution components
    /// (the scans still cover the first): the memory bomb of `DecodeBudgetTests`.
    static func jpegScanBomb(width: UInt16, height: UInt16, scans: Int, components: UInt8 = 1) -> [UInt8] {
        var jpeg: [UInt8] = [0xFF, 0xD8]
        // DQT: table 0, all ones.
        jpeg += segment(0xDB, [0x00] + [UInt8](repeating: 1, count: 64))
        // SOF2: precision 8, size, components with sampling 1x1 and table 0.
        var frame: [UInt8] = [8] + bigEndian16(height) + bigEndian16(width) + [components]
        for id in 1...components { frame += [id, 0x11, 0] }
        jpeg += segment(0xC2, frame)
        // DHT: AC table 0 with one code of length 1 for symbol E0 (EOB run of 2^14 + 14 bits).
        jpeg += segment(0xC4, [0x10, 1] + [UInt8](repeating: 0, count: 15) + [0xE0])
        let blocks = ((Int(width) + 7) / 8) * ((Int(height) + 7) / 8)
        let runs = (blocks + 32766) / 32767
        var writer = EntropyWriter()
        for _ in 0..<runs {
            writer.write(0, bits: 1)  // the code for E0
            writer.write(0x3FFF, bits: 14)  // run 2^14 + 16383 = 32767 blocks
        }
        let data = writer.finish()
        for _ in 0..<scans {
            // SOS: one component (id 1, AC table 0), spectral 1-63, no approximation.
            jpeg += segment(0xDA, [1, 1, 0x00, 1, 63, 0x00]) + data
        }
        return jpeg + [0xFF, 0xD9]
    }

    /// A marker segment: FF, code, 16-bit length counting itself, payload.
    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker] + bigEndian16(UInt16(payload.count + 2)) + payload
    }

    /// Packs entropy-coded bits most significant first, stuffing 00 after every FF byte
    /// and padding the last byte with ones (ITU T.81 F.1.2.3, F.1.2.1.1).
    struct EntropyWriter {
        private var bytes: [UInt8] = []
        private var accumulator: UInt32 = 0
        private var count = 0

        mutating func write(_ value: UInt32, bits: Int) {
            for shift in stride(from: bits - 1, through: 0, by: -1) {
                accumulator = accumulator << 1 | (value >> UInt32(shift) & 1)
                count += 1
                if count == 8 { flushByte() }
            }
        }

        mutating func finish() -> [UInt8] {
            while count != 0 { write(1, bits: 1) }
            return bytes
        }

        private mutating func flushByte() {
            let byte = UInt8(accumulator & 0xFF)
            bytes.append(byte)
            if byte == 0xFF { bytes.append(0x00) }
            accumulator = 0
            count = 0
        }
    }

    // MARK: - Bytes

    static func bigEndian32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func bigEndian16(_ value: UInt16) -> [UInt8] {
        [UInt8(value >> 8), UInt8(value & 0xFF)]
    }
}
