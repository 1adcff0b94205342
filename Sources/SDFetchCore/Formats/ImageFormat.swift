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
