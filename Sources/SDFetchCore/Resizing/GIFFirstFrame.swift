internal import CGIF

/// A GIF's first frame as a browser shows it before the animation moves on: placed on the
/// logical screen (transparent elsewhere), its transparent colour transparent, interlaced
/// rows put back in order. Read through giflib record by record (as ``GIFVerifier``), so the
/// screen and the frame meet `--max-pixels` before any pixels are allocated and the rest of
/// an animation is never decoded. Stateless; safe from any thread.
enum GIFFirstFrame {
    static func decode(_ bytes: [UInt8], maxPixels: Int64) -> Result<Pixels, FetchFailure> {
        GIFMemorySource.open(bytes, maxPixels: maxPixels) { gif, screen in
            firstFrame(gif, screen: screen, maxPixels: maxPixels)
        }
    }

    /// Skips extensions (noting a graphic control's transparent colour) to the first image.
    private static func firstFrame(
        _ gif: UnsafeMutablePointer<GifFileType>, screen: PixelSize, maxPixels: Int64
    ) -> Result<Pixels, FetchFailure> {
        var transparent: Int?
        while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else { return .failure(lastError(gif)) }
            switch record {
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else { return .failure(lastError(gif)) }
                return frame(gif, screen: screen, transparent: transparent, maxPixels: maxPixels)
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

    private static func frame(
        _ gif: UnsafeMutablePointer<GifFileType>, screen: PixelSize, transparent: Int?, maxPixels: Int64
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
            palette[index * 4 ..< index * 4 + 4] = [color.Red, color.Green, color.Blue, 255]
        }
        if let transparent { palette[transparent * 4 + 3] = 0 }
        var canvas = [UInt8](repeating: 0, count: screen.width * screen.height * 4)
        var line = [GifPixelType](repeating: 0, count: frame.width)
        let (left, top) = (Int(desc.Left), Int(desc.Top))
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
            let y = top + row
            guard y < screen.height else { continue }
            for x in 0..<min(frame.width, max(0, screen.width - left)) {
                let entry = Int(line[x]) * 4
                let at = (y * screen.width + left + x) * 4
                canvas[at] = palette[entry]
                canvas[at + 1] = palette[entry + 1]
                canvas[at + 2] = palette[entry + 2]
                canvas[at + 3] = palette[entry + 3]
            }
        }
        return .success(Pixels(width: screen.width, height: screen.height, channels: 4, data: canvas))
    }

    private static func lastError(_ gif: UnsafeMutablePointer<GifFileType>) -> FetchFailure {
        .decodeFailed("gif", GIFMemorySource.describe(gif.pointee.Error))
    }
}
