/// An image format recognised from leading bytes (<doc:Verification#Format-sniffing>).
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg, png, gif, webp, tiff, bmp, ico, heic, heif, avif, jxl, svg, pdf

    /// The spec's name, as used in JSON and `stats`.
    public var name: String { rawValue }

    /// File extension with its dot, as used for `-o` names.
    public var fileExtension: String {
        switch self {
        case .jpeg: ".jpg"
        default: "." + rawValue
        }
    }
}

/// How thoroughly downloaded bytes are checked (`--verify`).
public enum VerifyMode: String, Sendable, CaseIterable {
    /// Every byte's place in the format checked without decoding pixels (the default):
    /// PNG chunks and CRCs with the zlib stream inflated, JPEG markers and entropy-coded
    /// data, GIF blocks and sub-blocks, WebP RIFF chunks; header checks for the rest.
    case structure
    /// `structure`, then PNG, JPEG and GIF decoded completely.
    case full
    /// Signature and dimensions only.
    case header
    /// Signature only.
    case none
}
