/// Reads the size of the two Microsoft bitmap containers, BMP and ICO, from their headers.
///
/// Neither is decoded: they are rare on the web, and their pixel data is either
/// uncompressed (BMP) or an embedded BMP/PNG (ICO); the header is checked and the
/// dimensions reported.
enum WindowsBitmapHeaders {
    /// BMP: a 14-byte file header, then a DIB header whose first 4 bytes give its size.
    /// The 12-byte OS/2 `BITMAPCOREHEADER` stores 16-bit width and height; every later
    /// version (`BITMAPINFOHEADER` and successors) stores signed 32-bit values, a negative
    /// height meaning rows run top-down (Microsoft "BITMAPINFOHEADER structure").
    static func bmp(_ view: ByteView) -> PixelSize? {
        guard let headerSize = view.uint32(at: 14, bigEndian: false) else { return nil }
        if headerSize == 12 {
            guard let width = view.uint16(at: 18, bigEndian: false), let height = view.uint16(at: 20, bigEndian: false)
            else { return nil }
            return PixelSize(width: width, height: height)
        }
        guard let width = view.uint32(at: 18, bigEndian: false), let height = view.uint32(at: 22, bigEndian: false)
        else { return nil }
        // Int32.min has no positive counterpart in 32 bits; Int64 holds its magnitude.
        return PixelSize(width: Int64(Int32(bitPattern: width)), height: Int64(Int32(bitPattern: height)).magnitude)
    }

    /// ICO: a 6-byte `ICONDIR` (reserved, type 1, image count) and 16-byte entries whose
    /// first two bytes are width and height, where 0 means 256 (Microsoft "Icons",
    /// ICONDIRENTRY). The first entry stands for the file; a file listing no image is
    /// corrupt.
    static func ico(_ view: ByteView) -> PixelSize? {
        guard let count = view.uint16(at: 4, bigEndian: false), count > 0,
            view.contains(6, length: 16),
            let width = view.uint8(at: 6), let height = view.uint8(at: 7)
        else { return nil }
        return PixelSize(width: width == 0 ? 256 : Int(width), height: height == 0 ? 256 : Int(height))
    }
}
