internal import CWebP

/// Decodes WebP bytes completely through libwebp (`--verify full`): a still image's lossy
/// or lossless bitstream and its alpha, or every frame of an animation through
/// `WebPAnimDecoder`.
///
/// The canvas declared in the header (``canvas(of:maxPixels:)``) meets `--max-pixels`
/// before libwebp allocates anything sized by it. A still decodes to YUV with alpha (2.5
/// bytes a pixel, the least libwebp offers with every bit checked); an animation to one
/// RGBA canvas, and all its frames together may cover at most
/// ``GIFVerifier/animationBudgetFactor`` times the limit, as for GIF. The decode takes its
/// pixels from the process's ``PixelBudget`` first (an animation two canvases: libwebp's and
/// the one it blends into), so tiny files declaring huge canvases decode one at a time, not
/// cores at once. libwebp reports errors as status codes: no shim. Stateless; safe from any
/// thread; blocks for the decode, and while it waits for the budget.
enum WebPVerifier {
    static func decode(_ bytes: [UInt8], maxPixels: Int64) -> Result<PixelSize, FetchFailure> {
        bytes.withUnsafeBufferPointer { data -> Result<PixelSize, FetchFailure> in
            guard let base = data.baseAddress else { return .failure(.decodeFailed("webp", "no data")) }
            let features: WebPBitstreamFeatures
            switch canvas(of: data, maxPixels: maxPixels) {
            case .success(let found): features = found
            case .failure(let failure): return .failure(failure)
            }
            let size = PixelSize(width: features.width, height: features.height)
            let lease = PixelLease(.shared)
            lease.take(Int64(size.width) * Int64(size.height) * (features.has_animation != 0 ? 2 : 1))
            defer { lease.end() }
            if features.has_animation != 0 {
                return WebPAnimation.decodeFrames(data, maxPixels: maxPixels) { _ in true }.map { size }
            }
            var config = WebPDecoderConfig()
            guard WebPInitDecoderConfig(&config) != 0 else { return .failure(.decodeFailed("webp", "libwebp version")) }
            config.output.colorspace = MODE_YUVA
            let status = WebPDecode(base, data.count, &config)
            WebPFreeDecBuffer(&config.output)
            guard status == VP8_STATUS_OK else { return .failure(.decodeFailed("webp", describe(status))) }
            return .success(size)
        }
    }

    /// The header's features, the canvas size checked against the limit.
    static func canvas(of data: UnsafeBufferPointer<UInt8>, maxPixels: Int64) -> Result<
        WebPBitstreamFeatures, FetchFailure
    > {
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(data.baseAddress, data.count, &features)
        guard status == VP8_STATUS_OK else { return .failure(.decodeFailed("webp", describe(status))) }
        let size = PixelSize(width: features.width, height: features.height)
        if let failure = size.check("webp", maxPixels: maxPixels) { return .failure(failure) }
        return .success(features)
    }

    /// libwebp's status in words (its header's names).
    static func describe(_ status: VP8StatusCode) -> String {
        switch status {
        case VP8_STATUS_OUT_OF_MEMORY: "out of memory"
        case VP8_STATUS_INVALID_PARAM: "invalid parameter"
        case VP8_STATUS_BITSTREAM_ERROR: "bitstream error"
        case VP8_STATUS_UNSUPPORTED_FEATURE: "unsupported feature"
        case VP8_STATUS_SUSPENDED: "suspended"
        case VP8_STATUS_USER_ABORT: "aborted"
        case VP8_STATUS_NOT_ENOUGH_DATA: "not enough data"
        default: "status \(status.rawValue)"
        }
    }
}

/// An animated WebP's frames, composited on its canvas by libwebp's `WebPAnimDecoder`.
enum WebPAnimation {
    /// Decodes frames in order, handing each RGBA canvas (owned by the decoder, valid until
    /// the next frame) to `body` until it returns false. The canvas and the sum of all
    /// frames are checked against the limit before the decoder allocates anything.
    static func decodeFrames(
        _ data: UnsafeBufferPointer<UInt8>, maxPixels: Int64,
        _ body: (_ canvas: UnsafeBufferPointer<UInt8>) -> Bool
    ) -> Result<Void, FetchFailure> {
        guard case .success(let features) = WebPVerifier.canvas(of: data, maxPixels: maxPixels) else {
            return WebPVerifier.canvas(of: data, maxPixels: maxPixels).map { _ in () }
        }
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else { return .failure(.decodeFailed("webp", "libwebp version")) }
        options.color_mode = MODE_RGBA
        options.use_threads = 0
        var webp = WebPData(bytes: data.baseAddress, size: data.count)
        guard let decoder = WebPAnimDecoderNew(&webp, &options) else {
            return .failure(.decodeFailed("webp", "animation unreadable"))
        }
        defer { WebPAnimDecoderDelete(decoder) }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else {
            return .failure(.decodeFailed("webp", "animation unreadable"))
        }
        let canvasPixels = Int64(features.width) * Int64(features.height)
        let (budget, overflow) = maxPixels.multipliedReportingOverflow(by: GIFVerifier.animationBudgetFactor)
        guard overflow || Int64(info.frame_count) * canvasPixels <= budget else {
            return .failure(
                FetchFailure(
                    .tooManyPixels,
                    "webp frames exceed \(GIFVerifier.animationBudgetFactor)x the limit of \(maxPixels) pixels"))
        }
        let canvasBytes = Int(canvasPixels) * 4
        while WebPAnimDecoderHasMoreFrames(decoder) != 0 {
            if Interruption.isRequested { return .failure(FetchFailure(.interrupted, "webp decode cancelled")) }
            var frame: UnsafeMutablePointer<UInt8>?
            var timestamp: Int32 = 0
            guard WebPAnimDecoderGetNext(decoder, &frame, &timestamp) != 0, let frame else {
                return .failure(.decodeFailed("webp", "animation frame undecodable"))
            }
            guard body(UnsafeBufferPointer(start: frame, count: canvasBytes)) else { break }
        }
        return .success(())
    }
}
