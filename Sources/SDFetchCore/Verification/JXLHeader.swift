/// Reads a JPEG XL image's size from its codestream `SizeHeader`, without decoding.
///
/// ISO/IEC 18181-1, section A.2 (SizeHeader) after the FF 0A signature. The header is a
/// bit stream, least significant bit first. A container file (ISO/IEC 18181-2) wraps the
/// codestream in a `jxlc` box, or splits it over `jxlp` boxes whose payload starts with
/// a 4-byte part index; the size sits at the start of the first one.
enum JXLHeader {
    static func size(_ view: ByteView) -> PixelSize? {
        if view.uint8(at: 0) == 0xFF, view.uint8(at: 1) == 0x0A {
            return codestreamSize(view, at: 2)
        }
        for box in ISOBox.boxes(in: view, range: 0..<view.count) {
            if box.type == "jxlc" { return codestreamSize(view, at: box.payload.lowerBound + 2) }
            if box.type == "jxlp" { return codestreamSize(view, at: box.payload.lowerBound + 4 + 2) }
        }
        return nil
    }

    /// Width to height ratios selected by the 3-bit `ratio` field (values 1 to 7).
    private static let ratios: [(numerator: UInt64, denominator: UInt64)] = [
        (1, 1), (12, 10), (4, 3), (3, 2), (16, 9), (5, 4), (2, 1),
    ]

    private static func codestreamSize(_ view: ByteView, at offset: Int) -> PixelSize? {
        var bits = BitReader(view: view, byteOffset: offset)
        guard let isSmall = bits.read(1) else { return nil }
        guard let height = dimension(&bits, small: isSmall == 1), let ratio = bits.read(3) else { return nil }
        let width: UInt64
        if ratio == 0 {
            guard let value = dimension(&bits, small: isSmall == 1) else { return nil }
            width = value
        } else {
            let (numerator, denominator) = ratios[Int(ratio) - 1]
            width = height * numerator / denominator
        }
        return PixelSize(width: width, height: height)
    }

    /// A small dimension is a multiple of 8 in 5 bits; a large one a U32 with selectors
    /// of 9, 13, 18 or 30 bits, plus one.
    private static func dimension(_ bits: inout BitReader, small: Bool) -> UInt64? {
        if small {
            return bits.read(5).map { ($0 + 1) * 8 }
        }
        guard let selector = bits.read(2) else { return nil }
        let widths = [9, 13, 18, 30]
        return bits.read(widths[Int(selector)]).map { $0 + 1 }
    }

    /// Reads bits least significant first, as JPEG XL stores them; nil past the end.
    private struct BitReader {
        let view: ByteView
        var bitOffset: Int

        init(view: ByteView, byteOffset: Int) {
            self.view = view
            self.bitOffset = byteOffset * 8
        }

        mutating func read(_ count: Int) -> UInt64? {
            var value: UInt64 = 0
            for index in 0..<count {
                guard let byte = view.uint8(at: bitOffset >> 3) else { return nil }
                value |= UInt64(byte >> UInt8(bitOffset & 7) & 1) << UInt64(index)
                bitOffset += 1
            }
            return value
        }
    }
}
