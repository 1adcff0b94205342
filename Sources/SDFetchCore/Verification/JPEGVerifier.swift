internal import CSDFetchShims

/// Decodes JPEG bytes through libjpeg-turbo, via the C shim `CSDFetch_jpeg_decode`.
///
/// The shim holds libjpeg's `setjmp` error handling (Swift cannot call `setjmp`), judges
/// each libjpeg warning by its code (a truncated or broken scan is corrupt, extraneous
/// bytes and broken APP contents are not), checks the declared size against the limit
/// before libjpeg allocates its buffers, and keeps memory and scan work within a budget.
/// Stateless; safe from any thread. Blocks the caller for the length of the decode, which
/// stops within a few rows once the calling task is cancelled.
enum JPEGVerifier {
    /// Room for libjpeg's longest message (`JMSG_LENGTH_MAX` is 200) and our own.
    private static let messageCapacity = 256

    /// Decodes every scanline into one reused row. Nil when this libjpeg build cannot
    /// decode the file at all (12-bit samples, lossless or hierarchical processes): the
    /// structural walk is then the verdict.
    static func decode(_ bytes: [UInt8], maxPixels: Int64) -> Result<PixelSize, FetchFailure>? {
        var width: Int32 = 0
        var height: Int32 = 0
        var message = [CChar](repeating: 0, count: messageCapacity)
        let limit = UInt64(max(maxPixels, 0))
        let status = bytes.withUnsafeBufferPointer { data -> CSDFetch_jpeg_status in
            guard let base = data.baseAddress else { return CSDFetch_JPEG_CORRUPT }
            return message.withUnsafeMutableBufferPointer { text in
                // Runs on the verifying task's thread, so Interruption.isRequested sees that task.
                CSDFetch_jpeg_decode(
                    base, data.count, limit, { Interruption.isRequested ? 1 : 0 }, &width, &height, text.baseAddress!,
                    text.count)
            }
        }
        let size = PixelSize(width: width, height: height)
        let reason = message.withUnsafeBufferPointer { buffer in
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
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
        case CSDFetch_JPEG_UNSUPPORTED:
            return nil
        case CSDFetch_JPEG_OVER_BUDGET:
            return .failure(FetchFailure(.tooManyPixels, "jpeg decode over its work budget: \(reason.lowercased())"))
        case CSDFetch_JPEG_CANCELLED:
            return .failure(FetchFailure(.interrupted, "jpeg verification cancelled"))
        default:
            return .failure(.decodeFailed("jpeg", reason.isEmpty ? "no data" : reason))
        }
    }
}
