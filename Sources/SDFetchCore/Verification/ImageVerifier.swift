/// Checks downloaded bytes per ``VerifyMode`` and `--max-pixels` (<doc:Verification>).
///
/// - `none`: the signature alone; a signature-valid truncated file passes.
/// - `header`: signature and the header's dimensions, checked against the limit.
/// - `structure` (the default): PNG, JPEG, GIF and WebP walked byte by byte without
///   decoding pixels (``PNGStructure``, ``JPEGStructure``, ``GIFStructure``,
///   ``WebPStructure``); the other formats as in `header`.
/// - `full`: `structure`, then PNG, JPEG, GIF, WebP and AVIF decoded completely.
///
/// Verdicts are a browser's at every level: quirks browsers display are accepted.
/// Pure and thread-safe: call it from any task. A walk or decode is CPU work that blocks
/// the calling thread for its length; each stops early with `interrupted` once the calling
/// task is cancelled. Failures are values, never traps: `not-an-image`, `corrupt-image` or
/// `too-many-pixels`.
public struct ImageVerifier: Sendable {
    public var mode: VerifyMode
    public var maxPixels: Int64

    public init(mode: VerifyMode = .structure, maxPixels: Int64 = 100_000_000) {
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

    // MARK: - Levels

    /// The declared (or decoded) size; nil when the format's header does not state one.
    private func dimensions(of bytes: [UInt8], format: ImageFormat) -> Result<PixelSize?, FetchFailure> {
        switch mode {
        case .none: return .success(nil)
        case .header: return header(of: bytes, format: format)
        case .structure: return structure(of: bytes, format: format) ?? header(of: bytes, format: format)
        case .full:
            let walked = structure(of: bytes, format: format) ?? header(of: bytes, format: format)
            guard case .success = walked else { return walked }
            return decode(bytes, format: format) ?? walked
        }
    }

    /// The structural walk of the formats that have one; nil for the others.
    private func structure(of bytes: [UInt8], format: ImageFormat) -> Result<PixelSize?, FetchFailure>? {
        bytes.withUnsafeBytes { data -> Result<PixelSize?, FetchFailure>? in
            switch format {
            case .png: return PNGStructure.walk(data, maxPixels: maxPixels).map { $0 }
            case .jpeg: return JPEGStructure.walk(data, maxPixels: maxPixels).map { $0 }
            case .gif: return GIFStructure.walk(data, maxPixels: maxPixels).map { $0 }
            case .webp:
                if let failure = WebPStructure.check(data) { return .failure(failure) }
                return nil
            default: return nil
            }
        }
    }

    /// The complete decode of the formats with a linked decoder; nil for the others, and
    /// for files the system libraries cannot decode though browsers do (12-bit and lossless
    /// JPEG, GIF with LZW codes starting wider than 8 bits), which structure alone judges.
    private func decode(_ bytes: [UInt8], format: ImageFormat) -> Result<PixelSize?, FetchFailure>? {
        switch format {
        case .png:
            return PNGVerifier.decode(PNGStructure.completingEnd(bytes) ?? bytes, maxPixels: maxPixels).map { $0 }
        case .jpeg: return JPEGVerifier.decode(bytes, maxPixels: maxPixels)?.map { $0 }
        case .gif:
            if bytes.withUnsafeBytes(GIFStructure.needsWideLZWCodes) { return nil }
            return GIFVerifier.decode(bytes, maxPixels: maxPixels).map { $0 }
        case .webp: return WebPVerifier.decode(bytes, maxPixels: maxPixels).map { $0 }
        case .avif: return AVIFVerifier.decode(bytes, maxPixels: maxPixels).map { $0 }
        default: return nil
        }
    }

    /// Signature and declared dimensions only.
    private func header(of bytes: [UInt8], format: ImageFormat) -> Result<PixelSize?, FetchFailure> {
        let view = ByteView(bytes)
        switch format {
        case .jpeg:
            return bytes.withUnsafeBytes { JPEGStructure.walk($0, maxPixels: maxPixels, headerOnly: true).map { $0 } }
        case .png: return required(PNGVerifier.header(view), format)
        case .gif: return required(GIFVerifier.header(view), format)
        case .webp: return required(WebPHeader.size(view), format)
        case .tiff: return required(TIFFHeader.size(view), format)
        case .bmp: return required(WindowsBitmapHeaders.bmp(view), format)
        case .ico: return required(WindowsBitmapHeaders.ico(view), format)
        case .jxl: return required(JXLHeader.size(view), format)
        case .heic, .heif, .avif: return optional(HEIFHeader.size(view), format)
        case .svg: return optional(SVGHeader.size(bytes), format)
        // A PDF's page size is deep in its object graph: the signature is all we check.
        case .pdf: return .success(nil)
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
