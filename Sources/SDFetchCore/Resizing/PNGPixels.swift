internal import CPNG
import Glibc

/// A PNG's pixels through libpng's simplified API (as ``PNGVerifier``, which keeps libpng's
/// `longjmp` inside the library): 8-bit RGB, or RGBA when the file has alpha or a
/// transparent colour; grey is expanded, 16-bit reduced. The declared size meets
/// `--max-pixels` after the header is read and before the buffer exists. The first frame of
/// an APNG (its default image). Stateless; safe from any thread.
enum PNGPixels {
    static func decode(_ bytes: [UInt8], maxPixels: Int64) -> Result<Pixels, FetchFailure> {
        bytes.withUnsafeBytes { raw -> Result<Pixels, FetchFailure> in
            guard let base = raw.baseAddress else { return .failure(.decodeFailed("png", "no data")) }
            // One fixed address for the whole decode: libpng keeps it (see PNGVerifier).
            let image = UnsafeMutablePointer<png_image>.allocate(capacity: 1)
            image.initialize(to: png_image())
            image.pointee.version = UInt32(PNG_IMAGE_VERSION)
            defer {
                png_image_free(image)
                image.deallocate()
            }
            guard png_image_begin_read_from_memory(image, base, raw.count) != 0 else {
                return .failure(.decodeFailed("png", message(of: image.pointee)))
            }
            let size = PixelSize(width: image.pointee.width, height: image.pointee.height)
            if let failure = size.check("png", maxPixels: maxPixels) { return .failure(failure) }
            let hasAlpha = image.pointee.format & PNG_FORMAT_FLAG_ALPHA != 0
            image.pointee.format = PNG_FORMAT_FLAG_COLOR | (hasAlpha ? PNG_FORMAT_FLAG_ALPHA : 0)
            let channels = hasAlpha ? 4 : 3
            var data = [UInt8](repeating: 0, count: size.width * size.height * channels)
            let finished = data.withUnsafeMutableBytes { pixels in
                png_image_finish_read(image, nil, pixels.baseAddress, 0, nil)
            }
            guard finished != 0 else { return .failure(.decodeFailed("png", message(of: image.pointee))) }
            return .success(Pixels(width: size.width, height: size.height, channels: channels, data: data))
        }
    }

    private static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
