/// What verification learned about a body.
public struct VerifiedImage: Sendable, Equatable {
    public var format: ImageFormat
    /// Pixels, when the format's header declares them (SVG and PDF often do not).
    public var width: Int?
    public var height: Int?

    public init(format: ImageFormat, width: Int? = nil, height: Int? = nil) {
        self.format = format
        self.width = width
        self.height = height
    }
}

/// Checks downloaded bytes per ``VerifyMode`` and `--max-pixels` (SPEC "Verification").
///
/// - `none`: the signature alone; a signature-valid truncated file passes.
/// - `header`: signature and the header's dimensions, checked against the limit.
/// - `full`: PNG, JPEG and GIF decoded completely; the other formats as in `header`,
///   plus WebP's RIFF length checked against the data (a cheap truncation test).
///
/// Pure and thread-safe: call it from any task. A full decode is CPU work that blocks the
/// calling thread for its length (milliseconds for typical web images). Failures are
/// values, never traps: `not-an-image`, `corrupt-image` or `too-many-pixels`.
public struct ImageVerifier: Sendable {
    public var mode: VerifyMode
    public var maxPixels: Int64

    public init(mode: VerifyMode = .full, maxPixels: Int64 = 100_000_000) {
        self.mode = mode
        self.maxPixels = maxPixels
    }

    public func verify(_ bytes: [UInt8]) -> Result<VerifiedImage, FetchFailure> {
        guard let format = ImageFormat.sniff(bytes) else {
            return .failure(FetchFailure(.notAnImage, "no known image signature"))
        }
        if mode == .none {
            return .success(VerifiedImage(format: format))
        }
        return dimensions(of: bytes, format: format).map { size in
            VerifiedImage(format: format, width: size?.width, height: size?.height)
        }
    }

    // MARK: - Per format

    /// The declared (or decoded) size; nil when the format's header does not state one.
    private func dimensions(of bytes: [UInt8], format: ImageFormat) -> Result<PixelSize?, FetchFailure> {
        let view = ByteView(bytes)
        switch (format, mode) {
        case (.png, .full): return PNGVerifier.decode(bytes, maxPixels: maxPixels).map { $0 }
        case (.jpeg, .full): return JPEGVerifier.decode(bytes, maxPixels: maxPixels).map { $0 }
        case (.gif, .full): return GIFVerifier.decode(bytes, maxPixels: maxPixels).map { $0 }
        // libjpeg reads the markers; a hand-written walk would have to repeat its rules.
        case (.jpeg, _): return JPEGVerifier.header(bytes, maxPixels: maxPixels).map { $0 }
        case (.png, _): return required(PNGVerifier.header(view), format)
        case (.gif, _): return required(GIFVerifier.header(view), format)
        case (.webp, .full) where !WebPHeader.isComplete(view):
            return .failure(FetchFailure(.corruptImage, "webp data shorter than its riff header declares"))
        case (.webp, _): return required(WebPHeader.size(view), format)
        case (.tiff, _): return required(TIFFHeader.size(view), format)
        case (.bmp, _): return required(WindowsBitmapHeaders.bmp(view), format)
        case (.ico, _): return required(WindowsBitmapHeaders.ico(view), format)
        case (.jxl, _): return required(JXLHeader.size(view), format)
        case (.heic, _), (.heif, _), (.avif, _): return optional(HEIFHeader.size(view), format)
        case (.svg, _): return optional(SVGHeader.size(bytes), format)
        // A PDF's page size is deep in its object graph: the signature is all we check.
        case (.pdf, _): return .success(nil)
        }
    }

    /// For formats whose header always states the size: none found means a broken header.
    private func required(_ size: PixelSize?, _ format: ImageFormat) -> Result<PixelSize?, FetchFailure> {
        guard let size else {
            return .failure(FetchFailure(.corruptImage, "\(format.name) header unreadable"))
        }
        return optional(size, format)
    }

    /// For formats where a size is only found when simply declared.
    private func optional(_ size: PixelSize?, _ format: ImageFormat) -> Result<PixelSize?, FetchFailure> {
        guard let size else { return .success(nil) }
        if let failure = size.check(format.name, maxPixels: maxPixels) { return .failure(failure) }
        return .success(size)
    }
}
