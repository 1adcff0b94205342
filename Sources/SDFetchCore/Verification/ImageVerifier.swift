/// What verification learned about a body.
public struct VerifiedImage: Sendable, Equatable {
    public var format: ImageFormat
    public var width: Int?
    public var height: Int?

    public init(format: ImageFormat, width: Int? = nil, height: Int? = nil) {
        self.format = format
        self.width = width
        self.height = height
    }
}

/// Checks downloaded bytes per ``VerifyMode`` and `--max-pixels`.
///
/// Pure and thread-safe: call it from any task. Failures are values, never traps.
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
        return .success(VerifiedImage(format: format))
    }
}
