/// Width and height as declared by an image header, in pixels.
///
/// Declared, not trusted: ``check(_:maxPixels:)`` is the one place where a size read
/// from a file meets the rules (positive sides, `--max-pixels`), and every
/// decoder calls it before allocating anything sized by the image.
struct PixelSize: Equatable {
    let width: Int
    let height: Int

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    init(width: some BinaryInteger, height: some BinaryInteger) {
        // Header fields are at most 32 bits wide, so they always fit in Int on 64-bit Linux.
        self.init(width: Int(clamping: width), height: Int(clamping: height))
    }

    /// The pixel count, or nil when it overflows 64 bits (which is over any limit).
    var pixelCount: Int64? {
        let (product, overflow) = Int64(width).multipliedReportingOverflow(by: Int64(height))
        return overflow ? nil : product
    }

    /// Nil when the size is acceptable; otherwise why not, as an error kind.
    ///
    /// `name` is the format's name as it starts the detail ("png declares ...").
    func check(_ name: String, maxPixels: Int64) -> FetchFailure? {
        guard width > 0, height > 0 else {
            return FetchFailure(.corruptImage, "\(name) declares an invalid size of \(width)x\(height) pixels")
        }
        guard let count = pixelCount, count <= maxPixels else {
            return FetchFailure(
                .tooManyPixels, "\(name) declares \(width)x\(height) pixels, over the limit of \(maxPixels)")
        }
        return nil
    }
}

extension FetchFailure {
    /// A decoder's complaint as a `corrupt-image` detail: "png decode failed: ...".
    ///
    /// Library messages are capitalised sentences; a failure's detail is lower-case and
    /// without a final period.
    static func decodeFailed(_ name: String, _ reason: String) -> FetchFailure {
        var text = reason.trimmed(of: " .\n")
        if text.isEmpty { text = "unknown error" }
        return FetchFailure(.corruptImage, "\(name) decode failed: \(text.lowercased())")
    }
}

extension String {
    /// Drops leading and trailing characters found in `set` (Foundation-free).
    fileprivate func trimmed(of set: String) -> String {
        let characters = Set(set)
        let start = firstIndex { !characters.contains($0) } ?? endIndex
        let end = lastIndex { !characters.contains($0) }.map(index(after:)) ?? start
        return start < end ? String(self[start..<end]) : ""
    }
}
