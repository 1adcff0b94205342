internal import CSDFetchShims

/// Verifies JPEG bytes through libjpeg-turbo, via the C shim `CSDFetch_jpeg_decode`.
///
/// The shim holds libjpeg's `setjmp` error handling (Swift cannot call `setjmp`), turns
/// every warning into a failure (a truncated JPEG is only a warning in libjpeg) and
/// checks the declared size against the limit before libjpeg allocates its buffers.
/// Stateless; safe from any thread. Blocks the caller for the length of the decode.
enum JPEGVerifier {
    /// Room for libjpeg's longest message (`JMSG_LENGTH_MAX` is 200) and our own.
    private static let messageCapacity = 256

    /// Reads the markers up to the first scan: dimensions, no pixels.
    static func header(_ bytes: [UInt8], maxPixels: Int64) -> Result<PixelSize, FetchFailure> {
        run(bytes, headerOnly: true, maxPixels: maxPixels)
    }

    /// Decodes every scanline into one reused row; any libjpeg warning is corruption.
    static func decode(_ bytes: [UInt8], maxPixels: Int64) -> Result<PixelSize, FetchFailure> {
        run(bytes, headerOnly: false, maxPixels: maxPixels)
    }

    private static func run(_ bytes: [UInt8], headerOnly: Bool, maxPixels: Int64) -> Result<PixelSize, FetchFailure> {
        var width: Int32 = 0
        var height: Int32 = 0
        var message = [CChar](repeating: 0, count: messageCapacity)
        let limit = UInt64(max(maxPixels, 0))
        let status = bytes.withUnsafeBufferPointer { data -> CSDFetch_jpeg_status in
            guard let base = data.baseAddress else { return CSDFetch_JPEG_CORRUPT }
            return message.withUnsafeMutableBufferPointer { text in
                CSDFetch_jpeg_decode(
                    base, data.count, headerOnly ? 1 : 0, limit, &width, &height, text.baseAddress!, text.count)
            }
        }
        let size = PixelSize(width: width, height: height)
        switch status {
        case CSDFetch_JPEG_OK:
            // The shim already rejected empty images; this keeps the rule in one place.
            if let failure = size.check("jpeg", maxPixels: maxPixels) { return .failure(failure) }
            return .success(size)
        case CSDFetch_JPEG_TOO_MANY_PIXELS:
            return .failure(
                size.check("jpeg", maxPixels: maxPixels)
                    ?? FetchFailure(
                        .tooManyPixels, "jpeg declares \(width)x\(height) pixels, over the limit of \(maxPixels)"))
        default:
            let reason = message.withUnsafeBufferPointer { buffer in
                String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            return .failure(.decodeFailed("jpeg", reason.isEmpty ? "no data" : reason))
        }
    }
}
