/// How `-o` copies are resized (sdfetch(1) `--resize`, `--resize-mode`, `--resize-format`,
/// `--resize-quality`, `--resize-background`; README, "Resized copies").
public struct ResizeOptions: Sendable, Equatable {
    /// The target in pixels: of the shorter side, the longer side or the square, by ``mode``.
    public var size: Int
    public var mode: ResizeMode = .longer
    public var format: ResizeFormat = .jpeg
    /// 1-100: JPEG and lossy WebP quality (PNG is lossless and ignores it).
    public var quality = 85
    /// What `pad` fills the margins with and what a JPEG copy of an image with alpha is
    /// flattened onto: red, green, blue.
    public var background: [UInt8] = [255, 255, 255]

    /// The largest `--resize SIZE`: WebP's side limit (16383), and so every output side.
    public static let maxSize = 16383

    public init(size: Int) {
        self.size = size
    }
}

/// How an image meets the ``ResizeOptions/size`` (the modes of img2dataset's `resize_mode`,
/// named for what they keep). The aspect ratio is always kept; images smaller than the
/// target are enlarged, as img2dataset does, so every copy of a mode has a known shape.
public enum ResizeMode: String, Sendable, CaseIterable {
    /// The longer side becomes SIZE: the copy fits a SIZE x SIZE box (img2dataset's
    /// `keep_ratio_largest`, a thumbnail's usual meaning). The default.
    case longer
    /// The shorter side becomes SIZE (img2dataset's `keep_ratio`).
    case shorter
    /// SIZE x SIZE: the shorter side becomes SIZE and the longer is cut to it around the centre
    /// (`center_crop`).
    case crop
    /// SIZE x SIZE: the longer side becomes SIZE and the margins are filled with the background
    /// (`border`).
    case pad
    /// The original size, re-encoded in the output format (`no`); EXIF orientation applied.
    case none
}

/// The file format of resized copies.
public enum ResizeFormat: String, Sendable, CaseIterable {
    case jpeg, png, webp

    /// The format whose extension the copy's name takes.
    public var imageFormat: ImageFormat {
        switch self {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        }
    }
}
