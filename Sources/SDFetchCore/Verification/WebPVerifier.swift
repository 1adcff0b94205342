internal import CWebP

/// Decodes WebP bytes completely through libwebp (`--verify full`): a still image's lossy
/// or lossless bitstream and its alpha, or every frame of an animation.
///
/// The canvas declared in the header (``canvas(of:maxPixels:)``) meets `--max-pixels`
/// before libwebp allocates anything sized by it. A still decodes to YUV with alpha (2.5
/// bytes a pixel, the least libwebp offers with every bit checked), its pixels taken from
/// the process's ``PixelBudget`` first; an animation frame by frame, without a canvas
/// (``WebPAnimation``). The loop filter is skipped: it smooths pixels already decoded and
/// cannot fail, so the verdict is the same and the decode a few percent cheaper. The
/// decode is the whole cost `full` adds for WebP, as much again as the JPEG decodes on the
/// bench corpus (<doc:Verification#Levels>). libwebp reports errors as status codes: no shim. Stateless; safe
/// from any thread; blocks for the decode, and while it waits for the budget.
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
            if features.has_animation != 0 {
                return WebPAnimation.verifyFrames(data, maxPixels: maxPixels).map { size }
            }
            let lease = PixelLease(.shared)
            lease.take(Int64(size.width) * Int64(size.height))
            defer { lease.end() }
            var config = WebPDecoderConfig()
            guard WebPInitDecoderConfig(&config) != 0 else { return .failure(.decodeFailed("webp", "libwebp version")) }
            config.output.colorspace = MODE_YUVA
            config.options.bypass_filtering = 1
            let status = WebPDecode(base, data.count, &config)
            WebPFreeDecBuffer(&config.output)
            guard status == VP8_STATUS_OK else { return .failure(.decodeFailed("webp", describe(status))) }
            return .success(size)
        }
    }

    /// The header's features, the canvas size checked against the limit.
    static func canvas(
        of data: UnsafeBufferPointer<UInt8>, maxPixels: Int64
    ) -> Result<
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

/// An animated WebP's frames, each decoded alone as `WebPDemux` finds it: what a decoder
/// would composite, checked without a canvas. `WebPDemux` refuses a frame that does not fit
/// its canvas; blending cannot fail, so the frames decoding is the whole verdict, and the
/// memory a decode takes is its largest frame's, not two canvases (libwebp's
/// `WebPAnimDecoder`), which an 86-byte file could make 800 MB.
enum WebPAnimation {
    /// Decodes every frame, after checking each against the limit and all of them together
    /// against ``GIFVerifier/animationBudgetFactor`` times it, as for GIF; the largest
    /// frame's pixels are taken from the process's ``PixelBudget`` first.
    static func verifyFrames(_ data: UnsafeBufferPointer<UInt8>, maxPixels: Int64) -> Result<Void, FetchFailure> {
        var webp = WebPData(bytes: data.baseAddress, size: data.count)
        guard let demux = WebPDemux(&webp) else { return .failure(.decodeFailed("webp", "animation unreadable")) }
        defer { WebPDemuxDelete(demux) }
        let (budget, overflow) = maxPixels.multipliedReportingOverflow(by: GIFVerifier.animationBudgetFactor)
        var remaining = overflow ? Int64.max : budget
        var largest: Int64 = 0
        // First the sizes alone (the demuxer has them): nothing is decoded past a limit.
        let sized = frames(demux) { frame in
            let size = PixelSize(width: frame.width, height: frame.height)
            if let failure = size.check("webp frame", maxPixels: maxPixels) { return failure }
            let pixels = Int64(frame.width) * Int64(frame.height)
            remaining -= pixels
            guard remaining >= 0 else {
                return FetchFailure(
                    .tooManyPixels,
                    "webp frames exceed \(GIFVerifier.animationBudgetFactor)x the limit of \(maxPixels) pixels")
            }
            largest = max(largest, pixels)
            return nil
        }
        if case .failure = sized { return sized }
        let lease = PixelLease(.shared)
        lease.take(largest)
        defer { lease.end() }
        return frames(demux) { frame in
            if Interruption.isRequested { return FetchFailure(.interrupted, "webp decode cancelled") }
            var config = WebPDecoderConfig()
            guard WebPInitDecoderConfig(&config) != 0 else { return .decodeFailed("webp", "libwebp version") }
            config.output.colorspace = MODE_YUVA
            config.options.bypass_filtering = 1
            let status = WebPDecode(frame.fragment.bytes, frame.fragment.size, &config)
            WebPFreeDecBuffer(&config.output)
            return status == VP8_STATUS_OK ? nil : .decodeFailed("webp", "frame: \(WebPVerifier.describe(status))")
        }
    }

    /// Calls `body` with each frame in order until it returns a failure, which ends the walk.
    private static func frames(
        _ demux: OpaquePointer, _ body: (WebPIterator) -> FetchFailure?
    ) -> Result<Void, FetchFailure> {
        var iterator = WebPIterator()
        guard WebPDemuxGetFrame(demux, 1, &iterator) != 0 else {
            return .failure(.decodeFailed("webp", "animation has no frame"))
        }
        defer { WebPDemuxReleaseIterator(&iterator) }
        repeat {
            if let failure = body(iterator) { return .failure(failure) }
        } while WebPDemuxNextFrame(&iterator) != 0
        return .success(())
    }
}
