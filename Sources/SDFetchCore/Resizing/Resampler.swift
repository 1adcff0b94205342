import Glibc

/// A separable Lanczos-3 resampler on 8-bit pixels, with fixed-point weights (Pillow's
/// `Resample.c` scheme): one horizontal pass into 8-bit rows, then one vertical pass.
///
/// Why hand-written and Lanczos-3 (Scripts/bench.d/README.md, "Thumbnails", has the
/// numbers): it is the reference filter of the quality table (Pillow's LANCZOS, vips'
/// default `reduce`), sharper than OpenCV's INTER_AREA at the same size; JPEGs reach it
/// already shrunk by the DCT (``JPEGPixels``) and other formats through an integer box
/// pre-shrink (``BoxShrink``), so it only ever reduces by 2-3x, a dozen taps a pass. A
/// library would add a dependency to the static install for about 150 lines of loops:
/// libvips brings GLib and a dozen codecs, and Debian 12's stb has only the old
/// `stb_image_resize.h`, which works in float and is slower.
///
/// Pure; safe from any thread. Images with alpha are resampled premultiplied, so
/// transparent pixels lend no colour to their neighbours.
enum Resampler {
    /// Fractional bits of the weights: Pillow's `32 - 8 - 2`, so a sum of 8-bit samples
    /// times weights stays inside Int32 whatever the filter's overshoot.
    private static let precisionBits: Int32 = 22

    /// `source`'s region `box` (in its pixels, fractions allowed) resampled to `width` x `height`.
    static func resample(_ source: Pixels, box: Box, width: Int, height: Int) -> Pixels {
        var input = source
        if input.hasAlpha { input.premultiply() }
        let columns = Taps(inputSize: input.width, outputSize: width, start: box.x, length: box.width)
        let rows = Taps(inputSize: input.height, outputSize: height, start: box.y, length: box.height)
        // Only the rows the vertical pass reads are filtered horizontally.
        let firstRow = rows.starts.first.map(Int.init) ?? 0
        let lastRow = zip(rows.starts, rows.counts).map { Int($0 + $1) }.max() ?? 0
        let middle = horizontal(input, columns, rows: firstRow..<lastRow)
        var output = vertical(middle, rows, firstRow: firstRow, height: height)
        if output.hasAlpha { output.unpremultiply() }
        return output
    }

    /// A rectangle of the source, in source pixels.
    struct Box {
        var x: Double
        var y: Double
        var width: Double
        var height: Double
    }

    // MARK: - Weights

    /// For each output position, the first input sample, how many it reads, and their
    /// weights (``stride`` slots per position).
    struct Taps {
        var starts: [Int32] = []
        var counts: [Int32] = []
        var weights: [Int32] = []
        var stride = 0

        init(inputSize: Int, outputSize: Int, start: Double, length: Double) {
            let scale = length / Double(outputSize)
            // Reducing widens the kernel by the scale, so it still averages every input sample.
            let filterScale = max(scale, 1)
            let support = 3 * filterScale
            stride = Int(support.rounded(.up)) * 2 + 1
            starts.reserveCapacity(outputSize)
            counts.reserveCapacity(outputSize)
            weights = [Int32](repeating: 0, count: outputSize * stride)
            var kernel = [Double](repeating: 0, count: stride)
            for position in 0..<outputSize {
                let center = start + (Double(position) + 0.5) * scale
                let low = max(0, Int((center - support + 0.5).rounded(.down)))
                let high = min(inputSize, Int((center + support + 0.5).rounded(.down)))
                let count = max(0, min(high - low, stride))
                var total = 0.0
                for tap in 0..<count {
                    let weight = Self.lanczos3((Double(low + tap) - center + 0.5) / filterScale)
                    kernel[tap] = weight
                    total += weight
                }
                let one = Double(1 << Int(Resampler.precisionBits))
                for tap in 0..<count {
                    weights[position * stride + tap] = Int32((kernel[tap] / (total == 0 ? 1 : total) * one).rounded())
                }
                starts.append(Int32(low))
                counts.append(Int32(count))
            }
        }

        /// sinc(x) sinc(x / 3) on (-3, 3), zero outside.
        static func lanczos3(_ x: Double) -> Double {
            if x == 0 { return 1 }
            guard x > -3 && x < 3 else { return 0 }
            let pix = Double.pi * x
            // sin(3a) = 3 sin(a) - 4 sin(a)^3: one sine a tap, not two (the weights are
            // worked out per image, and the sines were a twentieth of a thumbnail's CPU).
            let third = sin(pix / 3)
            return 3 * (third * (3 - 4 * third * third)) * third / (pix * pix)
        }
    }

    // MARK: - Passes

    /// Along the rows: filtering there reads samples a pixel apart, which does not turn
    /// into vector code; filtering down the columns reads whole rows, which does. So the
    /// rows are turned into columns, filtered as ``vertical(_:_:firstRow:height:)`` filters,
    /// and turned back: two copies, cheaper than the per-pixel loop they replace.
    private static func horizontal(_ input: Pixels, _ taps: Taps, rows: Range<Int>) -> Pixels {
        let turned = input.transposed(rows: rows)
        let filtered = vertical(turned, taps, firstRow: 0, height: taps.starts.count)
        return filtered.transposed(rows: 0..<filtered.height)
    }

    /// Row by row: each output row is its input rows times their weights, summed a whole
    /// row at a time (contiguous bytes, which the compiler turns into vector code).
    private static func vertical(_ input: Pixels, _ taps: Taps, firstRow: Int, height: Int) -> Pixels {
        let rowBytes = input.width * input.channels
        var out = [UInt8](repeating: 0, count: rowBytes * height)
        var sums = [Int32](repeating: 0, count: rowBytes)
        input.data.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                sums.withUnsafeMutableBufferPointer { sums in
                    taps.weights.withUnsafeBufferPointer { weights in
                        for y in 0..<height {
                            let first = source.baseAddress! + (Int(taps.starts[y]) - firstRow) * rowBytes
                            let kernel = weights.baseAddress! + y * taps.stride
                            sums.update(repeating: half)
                            for tap in 0..<Int(taps.counts[y]) {
                                let row = first + tap * rowBytes
                                let weight = kernel[tap]
                                for column in 0..<rowBytes { sums[column] &+= Int32(row[column]) &* weight }
                            }
                            let outRow = target.baseAddress! + y * rowBytes
                            for column in 0..<rowBytes { outRow[column] = clamp(sums[column]) }
                        }
                    }
                }
            }
        }
        return Pixels(width: input.width, height: height, channels: input.channels, data: out)
    }

    /// Rounding: half of the weights' one, added before the shift.
    private static let half: Int32 = 1 << (precisionBits - 1)

    @inline(__always)
    private static func clamp(_ sum: Int32) -> UInt8 {
        let value = sum >> precisionBits
        return value < 0 ? 0 : value > 255 ? 255 : UInt8(truncatingIfNeeded: value)
    }
}

extension Pixels {
    /// Rows `rows` turned into columns: pixel (x, y) moves to (y - rows.lowerBound, x).
    func transposed(rows: Range<Int>) -> Pixels {
        channels == 3 ? transposed(rows: rows, channels: 3) : transposed(rows: rows, channels: 4)
    }

    @inline(__always)
    private func transposed(rows: Range<Int>, channels: Int) -> Pixels {
        let (inWidth, outWidth) = (width, rows.count)
        var out = [UInt8](repeating: 0, count: inWidth * outWidth * channels)
        // In tiles of 32 x 32 pixels, so both sides stay in the cache.
        let tile = 32
        data.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for rowTile in stride(from: 0, to: outWidth, by: tile) {
                    for columnTile in stride(from: 0, to: inWidth, by: tile) {
                        for y in rowTile..<min(rowTile + tile, outWidth) {
                            let inRow = source.baseAddress! + (rows.lowerBound + y) * inWidth * channels
                            for x in columnTile..<min(columnTile + tile, inWidth) {
                                let from = inRow + x * channels
                                let to = target.baseAddress! + (x * outWidth + y) * channels
                                for channel in 0..<channels { to[channel] = from[channel] }
                            }
                        }
                    }
                }
            }
        }
        return Pixels(width: outWidth, height: inWidth, channels: channels, data: out)
    }

    /// Colour times alpha, rounded: the form filters average without bleeding.
    mutating func premultiply() {
        data.withUnsafeMutableBufferPointer { bytes in
            for pixel in stride(from: 0, to: bytes.count, by: 4) {
                let alpha = UInt32(bytes[pixel + 3])
                for channel in 0..<3 {
                    bytes[pixel + channel] = UInt8((UInt32(bytes[pixel + channel]) * alpha + 127) / 255)
                }
            }
        }
    }

    /// Back to straight alpha; a fully transparent pixel stays black.
    mutating func unpremultiply() {
        data.withUnsafeMutableBufferPointer { bytes in
            for pixel in stride(from: 0, to: bytes.count, by: 4) {
                let alpha = UInt32(bytes[pixel + 3])
                guard alpha != 0 && alpha != 255 else { continue }
                for channel in 0..<3 {
                    bytes[pixel + channel] = UInt8(min(255, (UInt32(bytes[pixel + channel]) * 255 + alpha / 2) / alpha))
                }
            }
        }
    }
}
