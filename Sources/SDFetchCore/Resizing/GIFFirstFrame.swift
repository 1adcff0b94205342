internal import CGIF

/// A GIF's first frame as a browser shows it before the animation moves on: placed on the
/// logical screen (transparent elsewhere), its transparent colour transparent, interlaced
/// rows put back in order. Read through giflib record by record (as ``GIFVerifier``), so the
/// screen and the frame meet `--max-pixels` before any pixels are allocated and the rest of
/// an animation is never decoded.
///
/// The screen is never made at full size unless the copy needs it: the frame is decoded
/// alone and placed on a screen already box-shrunk by the factor `shrink` picks for the
/// screen's size (``CanvasShrink``), and the ``PixelLease`` takes the frame and the shrunk
/// screen before either exists. Stateless; safe from any thread; blocks for the decode
/// (and for the budget).
enum GIFFirstFrame {
    /// The first frame on the screen shrunk by `shrink(screen)`.
    static func decode(
        _ bytes: [UInt8], maxPixels: Int64, lease: PixelLease, shrink: (PixelSize) -> Int
    ) -> Result<Pixels, FetchFailure> {
        GIFMemorySource.open(bytes, maxPixels: maxPixels) { gif, screen in
            firstFrame(gif, screen: screen, maxPixels: maxPixels) { frame in
                let factor = max(1, shrink(screen))
                let shrunk = CanvasShrink.size(of: screen, factor: factor)
                lease.take(Int64(frame.width * frame.height) + Int64(shrunk.width * shrunk.height))
                return factor
            }
        }
    }

    /// Skips extensions (noting a graphic control's transparent colour) to the first image.
    private static func firstFrame(
        _ gif: UnsafeMutablePointer<GifFileType>, screen: PixelSize, maxPixels: Int64, start: (PixelSize) -> Int
    ) -> Result<Pixels, FetchFailure> {
        var transparent: Int?
        while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else { return .failure(lastError(gif)) }
            switch record {
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else { return .failure(lastError(gif)) }
                return frame(gif, screen: screen, transparent: transparent, maxPixels: maxPixels, start: start)
            case EXTENSION_RECORD_TYPE:
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else { return .failure(lastError(gif)) }
                // Graphic Control Extension (GIF89a section 23): packed flags, delay, index.
                if code == GRAPHICS_EXT_FUNC_CODE, let block, block[0] >= 4, block[1] & 1 != 0 {
                    transparent = Int(block[4])
                }
                while block != nil {
                    guard DGifGetExtensionNext(gif, &block) == GIF_OK else { return .failure(lastError(gif)) }
                }
            default:
                return .failure(.decodeFailed("gif", "no image before the end"))
            }
        }
    }

    /// Decodes the frame's rows (RGBA) and places them on the shrunk screen; `start` is told
    /// the frame's size once it passed the limit and returns the shrink factor.
    private static func frame(
        _ gif: UnsafeMutablePointer<GifFileType>, screen: PixelSize, transparent: Int?, maxPixels: Int64,
        start: (PixelSize) -> Int
    ) -> Result<Pixels, FetchFailure> {
        let desc = gif.pointee.Image
        let frame = PixelSize(width: desc.Width, height: desc.Height)
        if let failure = frame.check("gif frame", maxPixels: maxPixels) { return .failure(failure) }
        guard let colorMap = desc.ColorMap ?? gif.pointee.SColorMap else {
            return .failure(.decodeFailed("gif", "no colour table"))
        }
        var palette = [UInt8](repeating: 0, count: 256 * 4)
        for index in 0..<min(256, Int(colorMap.pointee.ColorCount)) {
            let color = colorMap.pointee.Colors[index]
            palette[index * 4..<index * 4 + 4] = [color.Red, color.Green, color.Blue, 255]
        }
        if let transparent { palette[transparent * 4 + 3] = 0 }
        let factor = start(frame)
        var pixels = [UInt8](repeating: 0, count: frame.width * frame.height * 4)
        var line = [GifPixelType](repeating: 0, count: frame.width)
        // Interlaced rows come in four passes (GIF89a appendix E): every 8th from 0, every
        // 8th from 4, every 4th from 2, every 2nd from 1.
        let rows: [Int] =
            desc.Interlace
            ? [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { Array(stride(from: $0.0, to: frame.height, by: $0.1)) }
            : Array(0..<frame.height)
        for (count, row) in rows.enumerated() {
            if count & 0xFF == 0xFF && Interruption.isRequested {
                return .failure(FetchFailure(.interrupted, "gif decode cancelled"))
            }
            let ok = line.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress, Int32(frame.width)) }
            guard ok == GIF_OK else { return .failure(lastError(gif)) }
            pixels.withUnsafeMutableBufferPointer { out in
                let start = row * frame.width * 4
                for x in 0..<frame.width {
                    let entry = Int(line[x]) * 4
                    for channel in 0..<4 { out[start + x * 4 + channel] = palette[entry + channel] }
                }
            }
        }
        let decoded = Pixels(width: frame.width, height: frame.height, channels: 4, data: pixels)
        return .success(
            CanvasShrink.place(decoded, left: Int(desc.Left), top: Int(desc.Top), on: screen, factor: factor))
    }

    private static func lastError(_ gif: UnsafeMutablePointer<GifFileType>) -> FetchFailure {
        .decodeFailed("gif", GIFMemorySource.describe(gif.pointee.Error))
    }
}
