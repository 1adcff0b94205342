internal import CSDFetchShims

/// A JPEG's pixels through libjpeg-turbo (the C shim `CSDFetch_jpeg_decode_pixels`), decoded
/// at the smallest DCT scale that still leaves twice the target: shrink-on-load. A 4000 px
/// photo made into a 256 px thumbnail is decoded at 1/4 (1000 px), and 16 M pixels are
/// never made. Twice, not once: a DCT scale is a block average that aliases fine detail
/// (at 1/8 each block's inverse DCT is its DC term), so Lanczos-3 needs a 2x reduction of
/// its own to filter it out, as libvips' thumbnail and Pillow's `reducing_gap` leave it
/// (Scripts/bench.d/README.md, "The `thumbnail` case", has the quality columns).
///
/// The shim contains libjpeg's `setjmp` error handling and its budgets (as for
/// ``JPEGVerifier``); the declared size meets `--max-pixels` before any buffer exists.
/// Stateless; safe from any thread; blocks for the decode (and for the budget).
enum JPEGPixels {
    /// The DCT scales libjpeg-turbo decodes fastest, largest reduction first.
    static let scaleDenominators = [8, 4, 2, 1]

    /// The reduction left to the resampler after the DCT scale: at least this.
    static let reducingGap = 2.0

    /// The largest reduction whose output is still at least ``reducingGap`` times the copy
    /// (`scale`: output pixels per source pixel, from ``ResizePlan``).
    static func denominator(forScale scale: Double) -> Int {
        scaleDenominators.first { Double($0) * scale * reducingGap <= 1 } ?? 1
    }

    /// The pixels at 1/`denominator` of the stored size, RGB (CMYK converted).
    /// `lease` takes the scaled image once the header told its size, before the buffer exists.
    static func decode(
        _ bytes: [UInt8], denominator: Int, maxPixels: Int64, lease: PixelLease
    ) -> Result<Pixels, FetchFailure> {
        var width: Int32 = 0
        var height: Int32 = 0
        var channels: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let limit = UInt64(max(maxPixels, 0))
        let header = call(bytes, denominator, limit, nil, 0, &width, &height, &channels, &message)
        guard header == CSDFetch_JPEG_OK else {
            return .failure(failure(header, width, height, message, maxPixels))
        }
        let size = PixelSize(width: width, height: height)
        if let failure = size.check("jpeg", maxPixels: maxPixels) { return .failure(failure) }
        lease.take(Int64(width) * Int64(height))
        var data = [UInt8](repeating: 0, count: Int(width) * Int(height) * Int(channels))
        let status = data.withUnsafeMutableBufferPointer { pixels in
            call(bytes, denominator, limit, pixels.baseAddress, pixels.count, &width, &height, &channels, &message)
        }
        guard status == CSDFetch_JPEG_OK else { return .failure(failure(status, width, height, message, maxPixels)) }
        let pixels = Pixels(width: Int(width), height: Int(height), channels: Int(channels), data: data)
        return .success(channels == 4 ? pixels.convertingInvertedCMYK() : pixels)
    }

    private static func call(
        _ bytes: [UInt8], _ denominator: Int, _ limit: UInt64, _ pixels: UnsafeMutablePointer<UInt8>?, _ count: Int,
        _ width: inout Int32, _ height: inout Int32, _ channels: inout Int32, _ message: inout [CChar]
    ) -> CSDFetch_jpeg_status {
        bytes.withUnsafeBufferPointer { data -> CSDFetch_jpeg_status in
            guard let base = data.baseAddress else { return CSDFetch_JPEG_CORRUPT }
            return message.withUnsafeMutableBufferPointer { text in
                CSDFetch_jpeg_decode_pixels(
                    base, data.count, limit, Int32(denominator), { Interruption.isRequested ? 1 : 0 }, pixels, count,
                    &width, &height, &channels, text.baseAddress!, text.count)
            }
        }
    }

    private static func failure(
        _ status: CSDFetch_jpeg_status, _ width: Int32, _ height: Int32, _ message: [CChar], _ maxPixels: Int64
    ) -> FetchFailure {
        let reason = message.withUnsafeBufferPointer { buffer in
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        switch status {
        case CSDFetch_JPEG_TOO_MANY_PIXELS:
            return PixelSize(width: width, height: height).check("jpeg", maxPixels: maxPixels)
                ?? FetchFailure(
                    .tooManyPixels, "jpeg declares \(width)x\(height) pixels, over the limit of \(maxPixels)")
        case CSDFetch_JPEG_OVER_BUDGET:
            return FetchFailure(.tooManyPixels, "jpeg decode over its work budget: \(reason.lowercased())")
        case CSDFetch_JPEG_CANCELLED:
            return FetchFailure(.interrupted, "jpeg decode cancelled")
        default:
            return .decodeFailed("jpeg", reason.isEmpty ? "no data" : reason)
        }
    }
}

extension Pixels {
    /// RGB from CMYK as Adobe applications write it (inverted: 255 is no ink), which is
    /// how nearly every CMYK JPEG on the web was made.
    func convertingInvertedCMYK() -> Pixels {
        let count = width * height
        var rgb = [UInt8](repeating: 0, count: count * 3)
        data.withUnsafeBufferPointer { cmyk in
            rgb.withUnsafeMutableBufferPointer { out in
                for pixel in 0..<count {
                    let k = UInt32(cmyk[pixel * 4 + 3])
                    for channel in 0..<3 {
                        out[pixel * 3 + channel] = UInt8((UInt32(cmyk[pixel * 4 + channel]) * k + 127) / 255)
                    }
                }
            }
        }
        return Pixels(width: width, height: height, channels: 3, data: rgb)
    }
}
