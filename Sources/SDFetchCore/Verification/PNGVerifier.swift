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

    /// Above this many bytes, pixels are decoded as 8-bit grey instead of in the file's own
    /// channels: a quarter of the memory, at about twice the CPU (libpng converts colour
    /// to grey through linear light). Below it the cheaper native layout wins; 64 MiB
    /// covers a 16-megapixel RGBA photo.
    static let nativeBufferLimit: Int64 = 64 << 20

    /// Decodes the whole image, checking every chunk CRC and the compressed data.
    ///
    /// The pixel limit is applied after `png_image_begin_read_from_memory` has read the
    /// header and before the pixel buffer exists. The buffer is at most
    /// ``nativeBufferLimit`` or `maxPixels` bytes, whichever is larger; a failed
    /// allocation is a failure value, not a trap.
    static func decode(_ bytes: [UInt8], maxPixels: Int64) -> Result<PixelSize, FetchFailure> {
        reading(bytes, maxPixels: maxPixels) { image, size in
            guard let pixels = size.pixelCount else { preconditionFailure("check passed, so the count fits") }
            image.pointee.format = outputFormat(native: image.pointee.format, pixels: pixels)
            guard let buffer = calloc(Int(pixels * channels(of: image.pointee.format)), 1) else {
                return .failure(
                    FetchFailure(.tooManyPixels, "png pixel buffer of \(size.width)x\(size.height) unavailable"))
            }
            defer { free(buffer) }
            // Removing an alpha channel composites onto this background rather than the buffer.
            var black = png_color(red: 0, green: 0, blue: 0)
            guard png_image_finish_read(image, &black, buffer, 0, nil) != 0 else {
                return .failure(.decodeFailed("png", message(of: image.pointee)))
            }
            return .success(size)
        }
    }

    /// Reads `bytes`' header with libpng's simplified API and checks the declared size
    /// against the limit, then hands `body` the image (its `format` to be chosen and
    /// `png_image_finish_read` to be called) and the size; frees libpng's state after.
    static func reading<T>(
        _ bytes: [UInt8], maxPixels: Int64,
        _ body: (UnsafeMutablePointer<png_image>, PixelSize) -> Result<T, FetchFailure>
    ) -> Result<T, FetchFailure> {
        bytes.withUnsafeBytes { raw -> Result<T, FetchFailure> in
            guard let base = raw.baseAddress else { return .failure(.decodeFailed("png", "no data")) }
            // libpng keeps the address given to begin_read (its error and warning handlers
            // write the message there and find their jump buffer through it) and uses it
            // again in finish_read, so the struct needs one fixed address for the whole
            // decode: `&image` on a local may be a different temporary at each call.
            let image = UnsafeMutablePointer<png_image>.allocate(capacity: 1)
            image.initialize(to: png_image())
            image.pointee.version = UInt32(PNG_IMAGE_VERSION)
            defer {
                // libpng frees its own state when a call fails; png_image_free is then a no-op.
                png_image_free(image)
                image.deallocate()
            }
            // The memory handed to begin_read must stay valid until finish_read: both
            // calls sit inside this one withUnsafeBytes.
            guard png_image_begin_read_from_memory(image, base, raw.count) != 0 else {
                return .failure(.decodeFailed("png", message(of: image.pointee)))
            }
            let size = PixelSize(width: image.pointee.width, height: image.pointee.height)
            if let failure = size.check("png", maxPixels: maxPixels) { return .failure(failure) }
            return body(image, size)
        }
    }

    /// The file's own channels at 8 bits (no linear 16-bit, no colour map), or grey
    /// (`PNG_FORMAT_GRAY`, 0) when that would exceed ``nativeBufferLimit``.
    /// `PNG_FORMAT_RGBA` and friends are composite macros Swift does not import; the
    /// single-bit `PNG_FORMAT_FLAG_*` constants it does.
    private static func outputFormat(native: UInt32, pixels: Int64) -> UInt32 {
        let format = native & ~(PNG_FORMAT_FLAG_LINEAR | PNG_FORMAT_FLAG_COLORMAP)
        return pixels * channels(of: format) <= nativeBufferLimit ? format : 0
    }

    /// Bytes per pixel of an 8-bit format: grey or three colours, plus alpha.
    private static func channels(of format: UInt32) -> Int64 {
        (format & PNG_FORMAT_FLAG_COLOR != 0 ? 3 : 1) + (format & PNG_FORMAT_FLAG_ALPHA != 0 ? 1 : 0)
    }

    /// libpng's NUL-terminated reason from the fixed `message` array.
    static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { raw in
            let text = raw.prefix { $0 != 0 }
            return String(decoding: text, as: UTF8.self)
        }
    }
}
