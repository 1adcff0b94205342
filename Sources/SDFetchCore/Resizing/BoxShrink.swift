/// Integer box shrink: each output pixel the mean of a `factor` x `factor` block.
///
/// The first step of a large reduction of a PNG, GIF or WebP (libvips' `shrink` before its
/// `reduce`): cheap (every input byte is added once) and alias-free at integer factors, it
/// leaves ``Resampler`` a 2-3x reduction, where Lanczos-3 needs a dozen taps instead of a
/// hundred. The last partial block of a row or column is dropped (less than `factor` input
/// pixels, under one output pixel). Pure; safe from any thread.
enum BoxShrink {
    /// The factor for reducing by `scale` (input pixels per output pixel): none below 4, so
    /// Lanczos always has at least 2x to filter.
    static func factor(forScale scale: Double) -> Int {
        scale >= 4 ? Int(scale / 2) : 1
    }

    static func shrink(_ input: Pixels, by factor: Int) -> Pixels {
        guard factor > 1 else { return input }
        let channels = input.channels
        let width = max(1, input.width / factor)
        let height = max(1, input.height / factor)
        let blockRows = min(factor, input.height)
        let blockColumns = min(factor, input.width)
        let area = UInt32(blockRows * blockColumns)
        var out = [UInt8](repeating: 0, count: width * height * channels)
        var sums = [UInt32](repeating: 0, count: width * channels)
        input.data.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                sums.withUnsafeMutableBufferPointer { sums in
                    for y in 0..<height {
                        for index in 0..<sums.count { sums[index] = 0 }
                        for row in (y * factor)..<(y * factor + blockRows) {
                            let line = source.baseAddress! + row * input.width * channels
                            for x in 0..<width {
                                var sample = line + x * factor * channels
                                for _ in 0..<blockColumns {
                                    for channel in 0..<channels {
                                        sums[x * channels + channel] &+= UInt32(sample[channel])
                                    }
                                    sample += channels
                                }
                            }
                        }
                        let outRow = target.baseAddress! + y * width * channels
                        for index in 0..<sums.count { outRow[index] = UInt8((sums[index] + area / 2) / area) }
                    }
                }
            }
        }
        return Pixels(width: width, height: height, channels: channels, data: out)
    }
}
