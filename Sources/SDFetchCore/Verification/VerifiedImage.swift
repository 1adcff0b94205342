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
