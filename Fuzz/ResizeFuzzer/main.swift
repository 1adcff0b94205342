@testable import SDFetchCore

/// libFuzzer entry point over the whole resize path (``ImageResizer``): JPEG at a DCT scale
/// (CMYK included), PNG, a GIF's first frame and an animated WebP's placed on their shrunk
/// canvases, still WebP decoded scaled, EXIF orientation in JPEG, WebP and PNG, then the
/// box shrink, Lanczos-3, pad or flatten and the encoder.
///
/// The first three bytes choose the copy (``FuzzInput``): mode and format, size (1-256),
/// quality; the rest is the image. The limit is lower than the product's (see
/// `VerifyFuzzer`), and the budget of its own: one resize at a time never waits.
@_cdecl("LLVMFuzzerTestOneInput")
public func resizeFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    guard input.bytes.count > 3 else { return 0 }
    let modes: [ResizeMode] = [.longer, .shorter, .crop, .pad, .none]
    let formats: [ResizeFormat] = [.jpeg, .png, .webp]
    var options = ResizeOptions(size: 1 + Int(input.bytes[1]))
    options.mode = modes[Int(input.mode) % modes.count]
    options.format = formats[Int(input.mode) / modes.count % formats.count]
    options.quality = 1 + Int(input.bytes[2]) % 100
    let image = Array(input.bytes.dropFirst(3))
    let resizer = ImageResizer(options: options, maxPixels: 1_000_000, budget: budget)
    guard case .success(let copy) = resizer.resize(image) else { return 0 }
    if copy.width <= 0 || copy.height <= 0 || copy.bytes.isEmpty {
        fatalError("a resize succeeded with an empty \(copy.width)x\(copy.height) copy")
    }
    return 0
}

private let budget = PixelBudget(capacity: 1 << 20)
