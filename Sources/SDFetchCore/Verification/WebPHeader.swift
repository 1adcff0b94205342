/// Reads a WebP image's canvas size from its first chunk, without decoding.
///
/// Layout from RFC 9649 (WebP Image Format): a 12-byte RIFF header ("RIFF", size, "WEBP"),
/// then a chunk header (four-character code at 12, size at 16) and its payload at 20.
/// The first chunk is one of three kinds, each storing the size differently.
enum WebPHeader {
    static func size(_ view: ByteView) -> PixelSize? {
        if view.matches("VP8 ", at: 12) { return lossy(view) }
        if view.matches("VP8L", at: 12) { return lossless(view) }
        if view.matches("VP8X", at: 12) { return extended(view) }
        return nil
    }

    /// Simple lossy format (RFC 9649 section 2.5; RFC 6386 section 9.1): a 3-byte frame tag,
    /// the start code 9D 01 2A, then 14-bit width and height (the top two bits are scaling).
    private static func lossy(_ view: ByteView) -> PixelSize? {
        guard view.uint8(at: 23) == 0x9D, view.uint8(at: 24) == 0x01, view.uint8(at: 25) == 0x2A,
            let width = view.uint16(at: 26, bigEndian: false), let height = view.uint16(at: 28, bigEndian: false)
        else { return nil }
        return PixelSize(width: width & 0x3FFF, height: height & 0x3FFF)
    }

    /// Simple lossless format (RFC 9649 section 3.2): signature byte 0x2F, then 14 bits of
    /// width minus one and 14 bits of height minus one, least significant bit first.
    private static func lossless(_ view: ByteView) -> PixelSize? {
        guard view.uint8(at: 20) == 0x2F, let bits = view.uint32(at: 21, bigEndian: false) else { return nil }
        return PixelSize(width: (bits & 0x3FFF) + 1, height: (bits >> 14 & 0x3FFF) + 1)
    }

    /// Extended format (RFC 9649 section 2.7): 4 bytes of flags, then the canvas width
    /// minus one and height minus one as 24-bit little-endian values.
    private static func extended(_ view: ByteView) -> PixelSize? {
        guard let width = view.uint24LE(at: 24), let height = view.uint24LE(at: 27) else { return nil }
        return PixelSize(width: width + 1, height: height + 1)
    }
}
