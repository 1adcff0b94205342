internal import CPNG
import Glibc

/// Verifies PNG bytes: the IHDR header alone, or a complete decode through libpng.
///
/// The full decode uses libpng's simplified `png_image_*` API, which keeps libpng's
/// `longjmp` error handling inside the library and reports failures in
/// `png_image.message`, so no C shim is needed. Stateless; safe from any thread.
enum PNGVerifier {
    /// Reads width and height from the IHDR chunk, which the PNG spec (section 5.6)
    /// requires first: length 13 at offset 8, type at 12, width at 16, height at 20.
    static func header(_ view: ByteView) -> PixelSize? {
        guard view.uint32(at: 8, bigEndian: true) == 13, view.matches("IHDR", at: 12),
            let width = view.uint32(at: 16, bigEndian: true),
            let height = view.uint32(at: 20, bigEndian: true)
        else { return nil }
        return PixelSize(width: width, height: height)
    }

    /// Decodes the whole image, checking every chunk CRC and the compressed data.
    ///
    /// The pixel limit is applied after `png_image_begin_read_from_memory` has read the
    /// header and before the pixel buffer exists. Pixels are decoded as 8-bit grey, one
    /// byte each, so the buffer is at most `maxPixels` bytes; a failed allocation is a
    /// failure value, not a trap.
    static func decode(_ bytes: [UInt8], maxPixels: Int64) -> Result<PixelSize, FetchFailure> {
        bytes.withUnsafeBytes { raw -> Result<PixelSize, FetchFailure> in
            guard let base = raw.baseAddress else { return .failure(.decodeFailed("png", "no data")) }
            var image = png_image()
            image.version = UInt32(PNG_IMAGE_VERSION)
            // libpng frees its own state when a call fails; png_image_free is then a no-op.
            defer { png_image_free(&image) }
            // The memory handed to begin_read must stay valid until finish_read: both
            // calls sit inside this one withUnsafeBytes.
            guard png_image_begin_read_from_memory(&image, base, raw.count) != 0 else {
                return .failure(.decodeFailed("png", message(of: image)))
            }
            let size = PixelSize(width: image.width, height: image.height)
            if let failure = size.check("png", maxPixels: maxPixels) { return .failure(failure) }
            guard let count = size.pixelCount, let buffer = calloc(Int(count), 1) else {
                return .failure(FetchFailure(.tooManyPixels, "png pixel buffer of \(size.width)x\(size.height) unavailable"))
            }
            defer { free(buffer) }
            // PNG_FORMAT_GRAY is 0: no colour, no alpha, no linear flag, no colour map.
            image.format = 0
            // Removing an alpha channel composites onto this background rather than the buffer.
            var black = png_color(red: 0, green: 0, blue: 0)
            guard png_image_finish_read(&image, &black, buffer, 0, nil) != 0 else {
                return .failure(.decodeFailed("png", message(of: image)))
            }
            return .success(size)
        }
    }

    /// libpng's NUL-terminated reason from the fixed `message` array.
    private static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { raw in
            let text = raw.prefix { $0 != 0 }
            return String(decoding: text, as: UTF8.self)
        }
    }
}
