/// Makes a resized copy of an image held in memory (the cached original of an `-o` file):
/// decode, turn upright (EXIF), resample, pad or flatten, encode (README, "Resized copies").
///
/// Every step that allocates pixels sizes them from a declared size already checked against
/// `--max-pixels`, and so is the output (a thin strip made `shorter` could grow past it). A
/// JPEG is decoded at the smallest DCT scale still leaving twice the target (``JPEGPixels``); an
/// animation's canvas (GIF screen, WebP canvas) is made already shrunk around its first
/// frame (``CanvasShrink``); a large reduction of another format starts with an integer box
/// shrink (``BoxShrink``); then Lanczos-3 (``Resampler``). A file that cannot be decoded, or
/// a format sdfetch does not decode (TIFF, HEIC, SVG, ...), is a `corrupt-image` failure of
/// that URL, never a trap.
///
/// Memory: each decode takes its pixels from the process's one ``PixelBudget`` before it
/// allocates them, and holds them until its copy is made; it waits while they do not fit.
///
/// Thread-safe: CPU work that blocks the calling thread for its length, and while it waits
/// for the budget. Callers on the cooperative pool hand it to a thread of their own (the
/// CLI's `sdfetch-resize` pool).
public struct ImageResizer: Sendable {
    public let options: ResizeOptions
    public let maxPixels: Int64
    let budget: PixelBudget

    public init(options: ResizeOptions, maxPixels: Int64) {
        self.init(options: options, maxPixels: maxPixels, budget: .shared)
    }

    init(options: ResizeOptions, maxPixels: Int64, budget: PixelBudget) {
        self.options = options
        self.maxPixels = maxPixels
        self.budget = budget
    }

    /// The resized copy's bytes, in ``ResizeOptions/format``.
    public func resize(_ bytes: [UInt8]) -> Result<ResizedImage, FetchFailure> {
        guard let format = ImageFormat.sniff(bytes) else {
            return .failure(FetchFailure(.notAnImage, "no known image signature"))
        }
        let lease = PixelLease(budget)
        defer { lease.end() }
        let orientation = ExifOrientation.read(bytes, format: format)
        var declared: PixelSize?
        // What the decoded pixels span of the upright image, when not exactly themselves.
        var span: (width: Double, height: Double)?
        // An animation's canvas, shrunk as it is made: the copy's size comes from the canvas.
        let shrink = { (canvas: PixelSize) -> Int in
            let upright = orientation.swapsSides ? PixelSize(width: canvas.height, height: canvas.width) : canvas
            declared = upright
            return shrinkFactor(for: upright)
        }
        let decoded: Result<Pixels, FetchFailure>
        switch format {
        case .jpeg:
            let stored: PixelSize
            switch bytes.withUnsafeBytes({ JPEGStructure.walk($0, maxPixels: maxPixels, headerOnly: true) }) {
            case .success(let size): stored = size
            case .failure(let failure): return .failure(failure)
            }
            let upright =
                orientation.swapsSides ? PixelSize(width: stored.height, height: stored.width) : stored
            let plan = ResizePlan(sourceWidth: upright.width, sourceHeight: upright.height, options: options)
            declared = upright
            let denominator = JPEGPixels.denominator(forScale: plan.scale)
            // libjpeg rounds a scaled side up (a last partial block makes a whole pixel): a
            // 1365 px side at 1/2 is 683 pixels spanning 682.5.
            span = (Double(upright.width) / Double(denominator), Double(upright.height) / Double(denominator))
            decoded = JPEGPixels.decode(bytes, denominator: denominator, maxPixels: maxPixels, lease: lease)
        case .png: decoded = PNGPixels.decode(bytes, maxPixels: maxPixels, lease: lease)
        case .gif: decoded = GIFFirstFrame.decode(bytes, maxPixels: maxPixels, lease: lease, shrink: shrink)
        case .webp: decoded = WebPPixels.decode(bytes, maxPixels: maxPixels, lease: lease, shrink: shrink)
        case .avif: decoded = AVIFPixels.decode(bytes, maxPixels: maxPixels, lease: lease)
        default:
            return .failure(
                FetchFailure(.corruptImage, "\(format.name) cannot be resized (jpeg, png, gif, webp and avif can)"))
        }
        return decoded.flatMap { pixels in
            resized(pixels.oriented(orientation).droppingOpaqueAlpha(), declared: declared, span: span)
        }
    }

    /// The box shrink a source of `upright` size starts with (1: none), as ``resized(_:declared:span:)``
    /// would pick it for the full-size pixels.
    private func shrinkFactor(for upright: PixelSize) -> Int {
        let plan = ResizePlan(sourceWidth: upright.width, sourceHeight: upright.height, options: options)
        guard options.mode != .none || (upright.width, upright.height) != (plan.width, plan.height) else { return 1 }
        return BoxShrink.factor(
            forScale: min(Double(upright.width) / Double(plan.width), Double(upright.height) / Double(plan.height)))
    }

    // MARK: - Steps

    /// Resampled, padded or flattened, encoded.
    /// `declared`: the upright size a JPEG decoded at a reduced DCT scale, or an animation's
    /// shrunk canvas, declares, so its copy has the same size whatever the reduction; nil:
    /// the pixels' own.
    /// `span`: how many of the pixels' own the whole image spans, fractions kept, when the
    /// decode rounded its size (a JPEG at a DCT scale); nil: the pixels' size.
    private func resized(
        _ source: Pixels, declared: PixelSize?, span: (width: Double, height: Double)?
    ) -> Result<ResizedImage, FetchFailure> {
        let size = declared ?? PixelSize(width: source.width, height: source.height)
        let plan = ResizePlan(sourceWidth: size.width, sourceHeight: size.height, options: options)
        let output = PixelSize(width: plan.canvasWidth, height: plan.canvasHeight)
        if let failure = output.check("resized copy", maxPixels: maxPixels) { return .failure(failure) }
        var pixels = source
        if options.mode != .none || (pixels.width, pixels.height) != (plan.width, plan.height) {
            let factor = BoxShrink.factor(
                forScale: min(Double(pixels.width) / Double(plan.width), Double(pixels.height) / Double(plan.height)))
            // The image's extent in shrunk pixels, fractions kept: the box shrink drops a
            // last partial block, and taking the shrunk size for the whole image would
            // stretch it by that much (37 dB instead of 54 on a 1920x1280 photo at 256 px).
            let whole = span ?? (Double(pixels.width), Double(pixels.height))
            let extent = (width: whole.width / Double(factor), height: whole.height / Double(factor))
            pixels = BoxShrink.shrink(pixels, by: factor)
            pixels = Resampler.resample(
                pixels, box: plan.sourceBox(width: extent.width, height: extent.height), width: plan.width,
                height: plan.height)
        }
        if options.format == .jpeg { pixels = pixels.flattened(on: options.background) }
        if options.mode == .pad { pixels = pixels.padded(to: plan, background: options.background) }
        return PixelEncoder.encode(pixels, as: options.format, quality: options.quality).map { bytes in
            ResizedImage(bytes: bytes, width: pixels.width, height: pixels.height, format: options.format)
        }
    }
}

/// A resized copy: its encoded bytes and size.
public struct ResizedImage: Sendable {
    public let bytes: [UInt8]
    public let width: Int
    public let height: Int
    public let format: ResizeFormat
}

extension Pixels {
    /// The image centred on `plan`'s canvas, the margins filled with `background` (opaque).
    func padded(to plan: ResizePlan, background: [UInt8]) -> Pixels {
        guard (plan.canvasWidth, plan.canvasHeight) != (width, height) else { return self }
        let fill = hasAlpha ? background + [255] : background
        var canvas = [UInt8](repeating: 0, count: plan.canvasWidth * plan.canvasHeight * channels)
        for pixel in 0..<(plan.canvasWidth * plan.canvasHeight) {
            canvas.replaceSubrange(pixel * channels..<(pixel + 1) * channels, with: fill)
        }
        let left = (plan.canvasWidth - width) / 2
        let top = (plan.canvasHeight - height) / 2
        let rowBytes = width * channels
        for y in 0..<height {
            let at = ((top + y) * plan.canvasWidth + left) * channels
            canvas.replaceSubrange(at..<(at + rowBytes), with: data[(y * rowBytes)..<((y + 1) * rowBytes)])
        }
        return Pixels(width: plan.canvasWidth, height: plan.canvasHeight, channels: channels, data: canvas)
    }
}
