/// An image format recognised from leading bytes (SPEC "Format sniffing").
public enum ImageFormat: String, Sendable, CaseIterable, Codable {
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
    /// Decode PNG, JPEG and GIF completely; header checks for the rest.
    case full
    /// Signature and dimensions only.
    case header
    /// Signature only.
    case none
}
