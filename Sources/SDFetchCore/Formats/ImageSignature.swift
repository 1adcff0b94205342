/// One magic-byte pattern: fixed bytes with wildcards, at the start of a file.
///
/// `nil` in ``pattern`` matches any byte. A pattern never matches data shorter than
/// itself, so sniffing a 3-byte body or an empty one is always `not-an-image`.
struct ImageSignature: Sendable {
    let format: ImageFormat
    let pattern: [UInt8?]

    init(_ format: ImageFormat, _ pattern: [UInt8?]) {
        self.format = format
        self.pattern = pattern
    }

    init(_ format: ImageFormat, ascii: String) {
        self.init(format, ascii.utf8.map { Optional($0) })
    }

    func matches(_ head: ArraySlice<UInt8>) -> Bool {
        guard head.count >= pattern.count else { return false }
        return zip(pattern, head).allSatisfy { expected, actual in expected.map { $0 == actual } ?? true }
    }

    /// The longest pattern: how many leading bytes sniffing ever needs for the binary formats.
    static let longestPattern = all.map(\.pattern.count).max() ?? 0

    /// Binary signatures, checked in order. ISO BMFF brands (HEIC, HEIF, AVIF, JPEG XL
    /// container) and SVG need more than a fixed pattern and are sniffed separately.
    static let all: [ImageSignature] = fixedSignatures + bitmapSignatures

    private static let fixedSignatures: [ImageSignature] = [
        // JPEG: SOI marker FF D8 followed by the first marker's FF (ITU-T T.81, B.1.1.2).
        ImageSignature(.jpeg, [0xFF, 0xD8, 0xFF]),
        // PNG: the eight-byte file signature (PNG spec, section 5.2).
        ImageSignature(.png, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
        // GIF: "GIF87a" or "GIF89a" header block (GIF89a spec, section 17).
        ImageSignature(.gif, ascii: "GIF87a"),
        ImageSignature(.gif, ascii: "GIF89a"),
        // WebP: a RIFF container, any size, whose form type is "WEBP" (RFC 9649, section 2.4).
        ImageSignature(.webp, [0x52, 0x49, 0x46, 0x46, nil, nil, nil, nil, 0x57, 0x45, 0x42, 0x50]),
        // TIFF: byte order "II" or "MM", then 42 in that order (TIFF 6.0, section 2).
        ImageSignature(.tiff, [0x49, 0x49, 0x2A, 0x00]),
        ImageSignature(.tiff, [0x4D, 0x4D, 0x00, 0x2A]),
        // ICO: reserved 0, type 1 (icon), an image count, then the first directory entry
        // whose reserved byte (offset 9) is 0 (Microsoft "Icons" technical article, ICONDIR).
        ImageSignature(.ico, [0x00, 0x00, 0x01, 0x00, nil, nil, nil, nil, nil, 0x00]),
        // JPEG XL bare codestream: the two-byte signature FF 0A (ISO/IEC 18181-1, 9.1).
        ImageSignature(.jxl, [0xFF, 0x0A]),
        // JPEG XL container: a 12-byte "JXL " signature box (ISO/IEC 18181-2, 3.1).
        ImageSignature(.jxl, [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]),
        // PDF: "%PDF-" then the version (ISO 32000-1, 7.5.2).
        ImageSignature(.pdf, ascii: "%PDF-"),
    ]

    /// BMP: "BM", then file size and reserved words (any), the pixel offset (any), and a
    /// DIB header whose size names a known header version (12 = OS/2 core, 40 = INFO,
    /// 52/56 = Adobe V2/V3, 64 = OS/2 v2, 108 = V4, 124 = V5; Microsoft "Bitmap Header
    /// Types"). Two letters alone would call any text starting "BM" an image.
    private static let bitmapSignatures: [ImageSignature] = [12, 40, 52, 56, 64, 108, 124].map { size in
        ImageSignature(.bmp, [0x42, 0x4D] + Array(repeating: nil, count: 12) + [size, 0x00, 0x00, 0x00])
    }
}
