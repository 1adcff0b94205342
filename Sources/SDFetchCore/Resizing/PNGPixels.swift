internal import CPNG

/// A PNG's pixels through libpng's simplified API (opened by ``PNGVerifier/reading(_:maxPixels:_:)``;
/// the API keeps libpng's `longjmp` inside the library): 8-bit RGB, or RGBA when the file has alpha or a
/// transparent colour; grey is expanded, 16-bit reduced. The declared size meets
/// `--max-pixels` after the header is read and before the buffer exists. The first frame of
/// an APNG (its default image). The ``PixelLease`` takes the image before the buffer
/// exists. Stateless; safe from any thread; blocks for the decode (and for the budget).
enum PNGPixels {
    static func decode(_ bytes: [UInt8], maxPixels: Int64, lease: PixelLease) -> Result<Pixels, FetchFailure> {
        PNGVerifier.reading(bytes, maxPixels: maxPixels) { image, size in
            lease.take(Int64(size.width * size.height))
            let hasAlpha = image.pointee.format & PNG_FORMAT_FLAG_ALPHA != 0
            image.pointee.format = PNG_FORMAT_FLAG_COLOR | (hasAlpha ? PNG_FORMAT_FLAG_ALPHA : 0)
            let channels = hasAlpha ? 4 : 3
            var data = [UInt8](repeating: 0, count: size.width * size.height * channels)
            let finished = data.withUnsafeMutableBytes { pixels in
                png_image_finish_read(image, nil, pixels.baseAddress, 0, nil)
            }
            guard finished != 0 else { return .failure(.decodeFailed("png", PNGVerifier.message(of: image.pointee))) }
            return .success(Pixels(width: size.width, height: size.height, channels: channels, data: data))
        }
    }
}
