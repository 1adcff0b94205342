internal import CWebP

/// A WebP's pixels through libwebp: a still image straight into our buffer (RGBA when it
/// has alpha, else RGB), shrunk on load, an animation's first frame through
/// ``WebPFirstFrame``. The canvas meets `--max-pixels` before any buffer exists, and the
/// ``PixelLease`` takes what the decode will hold before libwebp allocates it. Stateless; safe from any thread; blocks
/// for the decode (and for the budget).
enum WebPPixels {
    /// The pixels shrunk by `shrink(canvas)`: a still's, or an animation's first frame on
    /// its canvas.
    static func decode(
        _ bytes: [UInt8], maxPixels: Int64, lease: PixelLease, shrink: (PixelSize) -> Int
    ) -> Result<Pixels, FetchFailure> {
        bytes.withUnsafeBufferPointer { data -> Result<Pixels, FetchFailure> in
            let features: WebPBitstreamFeatures
            switch WebPVerifier.canvas(of: data, maxPixels: maxPixels) {
            case .success(let found): features = found
            case .failure(let failure): return .failure(failure)
            }
            let canvas = PixelSize(width: features.width, height: features.height)
            if features.has_animation != 0 {
                return WebPFirstFrame.decode(data, canvas: canvas, maxPixels: maxPixels, lease: lease, shrink: shrink)
            }
            return still(data, canvas: canvas, features: features, lease: lease, factor: max(1, shrink(canvas)))
        }
    }

    /// A still image decoded at 1/`factor` of its size by libwebp's scaled decoding
    /// (shrink-on-load, as a JPEG's DCT scale: README, "Resized copies"): a lossy one never exists at full size; a
    /// lossless one exists once, as libwebp's own ARGB image (4 bytes a pixel).
    private static func still(
        _ data: UnsafeBufferPointer<UInt8>, canvas: PixelSize, features: WebPBitstreamFeatures, lease: PixelLease,
        factor: Int
    ) -> Result<Pixels, FetchFailure> {
        let size = CanvasShrink.size(of: canvas, factor: factor)
        let channels = features.has_alpha != 0 ? 4 : 3
        let isLossless = features.format == 2
        lease.take(Int64(size.width * size.height) + (isLossless ? Int64(canvas.width * canvas.height) : 0))
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { return .failure(.decodeFailed("webp", "libwebp version")) }
        if factor > 1 {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(size.width)
            config.options.scaled_height = Int32(size.height)
        }
        config.output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB
        config.output.is_external_memory = 1
        var out = [UInt8](repeating: 0, count: size.width * size.height * channels)
        let status = out.withUnsafeMutableBufferPointer { out in
            config.output.u.RGBA.rgba = out.baseAddress
            config.output.u.RGBA.stride = Int32(size.width * channels)
            config.output.u.RGBA.size = out.count
            defer { WebPFreeDecBuffer(&config.output) }
            return WebPDecode(data.baseAddress, data.count, &config)
        }
        guard status == VP8_STATUS_OK else { return .failure(.decodeFailed("webp", WebPVerifier.describe(status))) }
        return .success(Pixels(width: size.width, height: size.height, channels: channels, data: out))
    }
}
/// An animated WebP's first frame as libwebp's `WebPAnimDecoder` shows it, without its two
/// canvas-sized buffers: the first frame is decoded alone (`WebPDemux` finds it) and placed
/// on a transparent canvas already box-shrunk (``CanvasShrink``). A first frame is never
/// blended (it is a key frame: the canvas before it is transparent), so placing it is the
/// whole composition.
enum WebPFirstFrame {
    static func decode(
        _ data: UnsafeBufferPointer<UInt8>, canvas: PixelSize, maxPixels: Int64, lease: PixelLease,
        shrink: (PixelSize) -> Int
    ) -> Result<Pixels, FetchFailure> {
        var webp = WebPData(bytes: data.baseAddress, size: data.count)
        guard let demux = WebPDemux(&webp) else { return .failure(.decodeFailed("webp", "animation unreadable")) }
        defer { WebPDemuxDelete(demux) }
        var iterator = WebPIterator()
        guard WebPDemuxGetFrame(demux, 1, &iterator) != 0 else {
            return .failure(.decodeFailed("webp", "animation has no frame"))
        }
        defer { WebPDemuxReleaseIterator(&iterator) }
        let frame = PixelSize(width: iterator.width, height: iterator.height)
        if let failure = frame.check("webp frame", maxPixels: maxPixels) { return .failure(failure) }
        let (left, top) = (Int(iterator.x_offset), Int(iterator.y_offset))
        guard left >= 0, top >= 0 else { return .failure(.decodeFailed("webp", "frame outside the canvas")) }
        let factor = max(1, shrink(canvas))
        let shrunk = CanvasShrink.size(of: canvas, factor: factor)
        lease.take(Int64(frame.width * frame.height) + Int64(shrunk.width * shrunk.height))
        var pixels = [UInt8](repeating: 0, count: frame.width * frame.height * 4)
        let decoded = pixels.withUnsafeMutableBufferPointer { out in
            WebPDecodeRGBAInto(
                iterator.fragment.bytes, iterator.fragment.size, out.baseAddress, out.count, Int32(frame.width * 4))
        }
        guard decoded != nil else { return .failure(.decodeFailed("webp", "animation frame undecodable")) }
        let first = Pixels(width: frame.width, height: frame.height, channels: 4, data: pixels)
        return .success(CanvasShrink.place(first, left: left, top: top, on: canvas, factor: factor))
    }
}
