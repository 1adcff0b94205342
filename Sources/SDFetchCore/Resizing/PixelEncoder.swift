internal import CPNG
internal import CSDFetchShims
internal import CWebP
import Glibc

/// Encodes resized pixels as the copy's file: JPEG through libjpeg-turbo (the shim
/// `CSDFetch_jpeg_encode_rgb`, which contains libjpeg's `setjmp`), PNG through libpng's
/// simplified `png_image_write_to_memory`, WebP through libwebp's lossy `WebPEncode*`.
/// Alpha is kept by PNG and WebP; JPEG input must be RGB (``Pixels/flattened(on:)``).
/// Stateless; safe from any thread.
enum PixelEncoder {
    static func encode(_ pixels: Pixels, as format: ResizeFormat, quality: Int) -> Result<[UInt8], FetchFailure> {
        switch format {
        case .jpeg: jpeg(pixels, quality: quality)
        case .png: png(pixels)
        case .webp: webp(pixels, quality: quality)
        }
    }

    private static func jpeg(_ pixels: Pixels, quality: Int) -> Result<[UInt8], FetchFailure> {
        precondition(pixels.channels == 3, "JPEG copies are flattened first")
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = pixels.data.withUnsafeBufferPointer { data in
            message.withUnsafeMutableBufferPointer { text in
                CSDFetch_jpeg_encode_rgb(
                    data.baseAddress!, Int32(pixels.width), Int32(pixels.height), Int32(quality), &output, &size,
                    text.baseAddress!, text.count)
            }
        }
        defer { free(output) }
        guard status == CSDFetch_JPEG_OK, let output else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(FetchFailure(.io, "jpeg encode failed: \(reason.lowercased())"))
        }
        return .success(Array(UnsafeBufferPointer(start: output, count: Int(size))))
    }

    private static func png(_ pixels: Pixels) -> Result<[UInt8], FetchFailure> {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        image.width = UInt32(pixels.width)
        image.height = UInt32(pixels.height)
        image.format = PNG_FORMAT_FLAG_COLOR | (pixels.hasAlpha ? PNG_FORMAT_FLAG_ALPHA : 0)
        return pixels.data.withUnsafeBytes { data -> Result<[UInt8], FetchFailure> in
            // First the size (no memory given), then the write into a buffer of that size.
            var size = 0
            guard png_image_write_to_memory(&image, nil, &size, 0, data.baseAddress, 0, nil) != 0 else {
                return .failure(FetchFailure(.io, "png encode failed"))
            }
            var output = [UInt8](repeating: 0, count: size)
            let written = output.withUnsafeMutableBytes { out in
                png_image_write_to_memory(&image, out.baseAddress, &size, 0, data.baseAddress, 0, nil)
            }
            guard written != 0 else { return .failure(FetchFailure(.io, "png encode failed")) }
            return .success(Array(output.prefix(size)))
        }
    }

    private static func webp(_ pixels: Pixels, quality: Int) -> Result<[UInt8], FetchFailure> {
        var output: UnsafeMutablePointer<UInt8>?
        let size = pixels.data.withUnsafeBufferPointer { data in
            pixels.hasAlpha
                ? WebPEncodeRGBA(
                    data.baseAddress, Int32(pixels.width), Int32(pixels.height), Int32(pixels.width * 4),
                    Float(quality),
                    &output)
                : WebPEncodeRGB(
                    data.baseAddress, Int32(pixels.width), Int32(pixels.height), Int32(pixels.width * 3),
                    Float(quality),
                    &output)
        }
        defer { WebPFree(output) }
        guard size > 0, let output else { return .failure(FetchFailure(.io, "webp encode failed")) }
        return .success(Array(UnsafeBufferPointer(start: output, count: size)))
    }
}
