internal import CAvif

/// An AVIF opened with libavif over bytes in memory, its container parsed and its declared
/// size checked against `--max-pixels` before the AV1 decoder allocates anything: the one
/// door of ``AVIFVerifier`` and ``AVIFPixels``.
///
/// Set up as a browser's decoder is (Chromium's, which is libavif too): strictness off, so
/// files browsers show pass; Exif and XMP not read (the `irot`/`imir` properties, which
/// HEIF makes the orientation, are); one thread, as every decode here runs on a thread of
/// its own. libavif reports errors as result codes: no shim. Stateless; safe from any thread.
enum AVIFFile {
    /// Opens `bytes` and hands `body` the parsed decoder and the declared size (the first
    /// image's, which is every frame's in an AVIF sequence); destroys the decoder after.
    static func open<T>(
        _ bytes: [UInt8], maxPixels: Int64,
        _ body: (UnsafeMutablePointer<avifDecoder>, PixelSize) -> Result<T, FetchFailure>
    ) -> Result<T, FetchFailure> {
        bytes.withUnsafeBufferPointer { data -> Result<T, FetchFailure> in
            guard let base = data.baseAddress, let decoder = avifDecoderCreate() else {
                return .failure(.decodeFailed("avif", "no data"))
            }
            defer { avifDecoderDestroy(decoder) }
            decoder.pointee.maxThreads = 1
            decoder.pointee.strictFlags = avifStrictFlags(AVIF_STRICT_DISABLED.rawValue)
            decoder.pointee.ignoreExif = 1
            decoder.pointee.ignoreXMP = 1
            // The AV1 decoder's own limit too (0 is reserved: at least one pixel).
            decoder.pointee.imageSizeLimit = UInt32(clamping: max(1, maxPixels))
            var result = avifDecoderSetIOMemory(decoder, base, data.count)
            if result == AVIF_RESULT_OK { result = avifDecoderParse(decoder) }
            guard result == AVIF_RESULT_OK else { return .failure(failure(result)) }
            guard let image = decoder.pointee.image else { return .failure(.decodeFailed("avif", "no image")) }
            let size = PixelSize(width: image.pointee.width, height: image.pointee.height)
            if let failure = size.check("avif", maxPixels: maxPixels) { return .failure(failure) }
            return body(decoder, size)
        }
    }

    /// libavif's words for a result.
    static func failure(_ result: avifResult) -> FetchFailure {
        .decodeFailed("avif", String(cString: avifResultToString(result)).lowercased())
    }
}

/// Decodes AVIF bytes completely through libavif (`--verify full`): the image, its alpha,
/// and every frame of a sequence, to YUV (libavif's own planes; no colour conversion, which
/// cannot fail). The frames together meet ``GIFVerifier/animationBudgetFactor`` times
/// `--max-pixels`, as GIF's and WebP's do; one frame's pixels are taken from the process's
/// ``PixelBudget`` first. Stateless; safe from any thread; blocks for the decode.
enum AVIFVerifier {
    static func decode(_ bytes: [UInt8], maxPixels: Int64) -> Result<PixelSize, FetchFailure> {
        AVIFFile.open(bytes, maxPixels: maxPixels) { decoder, size in
            let pixels = Int64(size.width) * Int64(size.height)
            let (budget, budgetOverflows) = maxPixels.multipliedReportingOverflow(
                by: GIFVerifier.animationBudgetFactor)
            let (total, totalOverflows) = Int64(max(1, decoder.pointee.imageCount)).multipliedReportingOverflow(
                by: pixels)
            if !budgetOverflows, totalOverflows || total > budget {
                return .failure(
                    FetchFailure(
                        .tooManyPixels,
                        "avif frames exceed \(GIFVerifier.animationBudgetFactor)x the limit of \(maxPixels) pixels"))
            }
            let lease = PixelLease(.shared)
            lease.take(pixels)
            defer { lease.end() }
            while true {
                if Interruption.isRequested { return .failure(FetchFailure(.interrupted, "avif decode cancelled")) }
                let result = avifDecoderNextImage(decoder)
                if result == AVIF_RESULT_NO_IMAGES_REMAINING { break }
                guard result == AVIF_RESULT_OK else { return .failure(AVIFFile.failure(result)) }
            }
            return .success(size)
        }
    }
}
