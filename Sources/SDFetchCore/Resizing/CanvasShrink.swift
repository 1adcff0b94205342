/// An animation's first frame placed on its transparent canvas and box-shrunk as it is
/// placed: the GIF logical screen or the animated WebP canvas is never made at full size.
///
/// A canvas may be far larger than its frame (a 43-byte GIF declares a 10000x10000 screen
/// around a 1x1 frame: 400 MB as RGBA), and what a resize needs is the canvas after
/// ``BoxShrink``. So the output is exactly `BoxShrink.shrink(canvas, by: factor)` of the
/// canvas the frame would make, computed from the frame alone: blocks the frame does not
/// reach stay transparent black, the others average the frame's pixels and the canvas's
/// zeros. Memory: the shrunk canvas, plus one row of sums. Pure; safe from any thread.
enum CanvasShrink {
    /// The shrunk size of a canvas of `canvas` (as ``BoxShrink`` makes it).
    static func size(of canvas: PixelSize, factor: Int) -> PixelSize {
        PixelSize(width: max(1, canvas.width / factor), height: max(1, canvas.height / factor))
    }

    /// `frame` (RGBA) at (`left`, `top`) on a transparent `canvas`, shrunk by `factor`;
    /// what lies outside the canvas is cut off.
    static func place(_ frame: Pixels, left: Int, top: Int, on canvas: PixelSize, factor: Int) -> Pixels {
        precondition(frame.channels == 4 && factor >= 1 && left >= 0 && top >= 0, "an RGBA frame on the canvas")
        let out = size(of: canvas, factor: factor)
        // As BoxShrink: a block is `factor` square, or the whole side when it is shorter; the
        // last partial block of a row or column is dropped.
        let blockColumns = min(factor, canvas.width)
        let blockRows = min(factor, canvas.height)
        let area = UInt64(blockRows) * UInt64(blockColumns)
        var data = [UInt8](repeating: 0, count: out.width * out.height * 4)
        let visibleWidth = min(left + frame.width, canvas.width, out.width * blockColumns) - left
        let visibleHeight = min(top + frame.height, canvas.height, out.height * blockRows) - top
        guard visibleWidth > 0, visibleHeight > 0 else {
            return Pixels(width: out.width, height: out.height, channels: 4, data: data)
        }
        let firstColumn = left / factor
        let lastColumn = (left + visibleWidth - 1) / factor
        var sums = [UInt64](repeating: 0, count: (lastColumn - firstColumn + 1) * 4)
        frame.data.withUnsafeBufferPointer { source in
            data.withUnsafeMutableBufferPointer { target in
                for outY in (top / factor)...((top + visibleHeight - 1) / factor) {
                    for index in sums.indices { sums[index] = 0 }
                    let rows = max(outY * factor, top)..<min(outY * factor + blockRows, top + visibleHeight)
                    for y in rows {
                        let line = (y - top) * frame.width * 4
                        for x in 0..<visibleWidth {
                            let sum = ((left + x) / factor - firstColumn) * 4
                            for channel in 0..<4 { sums[sum + channel] &+= UInt64(source[line + x * 4 + channel]) }
                        }
                    }
                    let row = (outY * out.width + firstColumn) * 4
                    for index in sums.indices { target[row + index] = UInt8((sums[index] + area / 2) / area) }
                }
            }
        }
        return Pixels(width: out.width, height: out.height, channels: 4, data: data)
    }
}
