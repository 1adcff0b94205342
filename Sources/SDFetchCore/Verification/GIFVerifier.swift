internal import CGIF

/// Verifies GIF bytes: the logical screen alone, or every frame decoded through giflib.
///
/// giflib 5.2 reports errors as return codes and reads through a callback, so no C shim
/// is needed. Records are walked one by one rather than with `DGifSlurp`, which would
/// allocate each frame's pixels before we could look at its size. Stateless; safe from
/// any thread. Blocks the caller for the length of the decode, which stops within 256
/// rows once the calling task is cancelled.
enum GIFVerifier {
    /// An animation may decode at most this many times `--max-pixels` in all its frames
    /// together: a small file of huge, well-compressed frames must not take minutes.
    static let animationBudgetFactor: Int64 = 10

    /// Reads the logical screen descriptor right after the 6-byte signature
    /// (GIF89a spec, section 18): width and height, 16-bit little-endian.
    static func header(_ view: ByteView) -> PixelSize? {
        guard let width = view.uint16(at: 6, bigEndian: false), let height = view.uint16(at: 8, bigEndian: false)
        else { return nil }
        return PixelSize(width: width, height: height)
    }

    /// Decodes every frame, checking the screen and each frame against the limit first.
    static func decode(_ bytes: [UInt8], maxPixels: Int64) -> Result<PixelSize, FetchFailure> {
        GIFMemorySource.open(bytes, maxPixels: maxPixels) { gif, screen in
            walkRecords(gif, maxPixels: maxPixels).map { screen }
        }
    }

    // MARK: - Records

    /// Reads records until the trailer; a missing trailer is a truncated file. A byte that
    /// starts no record ends the stream once a frame has been decoded, as in browsers and
    /// ``GIFStructure``; giflib reports it as `D_GIF_ERR_WRONG_RECORD`.
    private static func walkRecords(
        _ gif: UnsafeMutablePointer<GifFileType>, maxPixels: Int64
    ) -> Result<Void, FetchFailure> {
        let (budget, overflow) = maxPixels.multipliedReportingOverflow(by: animationBudgetFactor)
        var remainingBudget = overflow ? Int64.max : budget
        var row: [GifPixelType] = []
        var frames = 0
        while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else {
                if frames > 0 && gif.pointee.Error == D_GIF_ERR_WRONG_RECORD { return .success(()) }
                return .failure(lastError(gif))
            }
            switch record {
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else { return .failure(lastError(gif)) }
                let frame = PixelSize(width: gif.pointee.Image.Width, height: gif.pointee.Image.Height)
                if let failure = frame.check("gif frame", maxPixels: maxPixels) { return .failure(failure) }
                remainingBudget -= frame.pixelCount ?? Int64.max
                guard remainingBudget >= 0 else {
                    return .failure(
                        FetchFailure(
                            .tooManyPixels,
                            "gif frames exceed \(animationBudgetFactor)x the limit of \(maxPixels) pixels"))
                }
                // Frame sides are 16-bit, so the row is at most 65535 bytes.
                if row.count < frame.width { row = [GifPixelType](repeating: 0, count: frame.width) }
                var isCancelled = false
                let ok = row.withUnsafeMutableBufferPointer { line in
                    (0..<frame.height).allSatisfy { y in
                        // A look at the task every 256 rows: a big frame stops promptly.
                        if y & 0xFF == 0xFF && Interruption.isRequested {
                            isCancelled = true
                            return false
                        }
                        return DGifGetLine(gif, line.baseAddress, Int32(frame.width)) == GIF_OK
                    }
                }
                if isCancelled { return .failure(FetchFailure(.interrupted, "gif verification cancelled")) }
                guard ok else { return .failure(lastError(gif)) }
                frames += 1
            case EXTENSION_RECORD_TYPE:
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else { return .failure(lastError(gif)) }
                while block != nil {
                    guard DGifGetExtensionNext(gif, &block) == GIF_OK else { return .failure(lastError(gif)) }
                }
            case TERMINATE_RECORD_TYPE:
                return .success(())
            default:
                return .failure(.decodeFailed("gif", "unknown record type"))
            }
        }
    }

    private static func lastError(_ gif: UnsafeMutablePointer<GifFileType>) -> FetchFailure {
        .decodeFailed("gif", GIFMemorySource.describe(gif.pointee.Error))
    }
}
