@testable import SDFetchCore

/// libFuzzer entry point over ``ExifOrientation``: the first byte picks the container (JPEG,
/// WebP or PNG, whose EXIF the resizer reads), the rest is the file. Whatever the bytes, the
/// reading ends, is the same twice, and turning a small image by it moves every pixel to
/// exactly one place (its sides swapped for orientations 5-8).
@_cdecl("LLVMFuzzerTestOneInput")
public func exifFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    guard let selector = input.bytes.first else { return 0 }
    let formats: [ImageFormat] = [.jpeg, .webp, .png]
    let format = formats[Int(selector) % formats.count]
    let file = Array(input.bytes.dropFirst())
    let orientation = ExifOrientation.read(file, format: format)
    precondition(ExifOrientation.read(file, format: format) == orientation, "the same bytes read alike")
    // Three by two pixels, each its own value in every channel.
    let image = Pixels(width: 3, height: 2, channels: 3, data: (0..<18).map { UInt8($0 / 3) })
    let turned = image.oriented(orientation)
    let (width, height) = orientation.swapsSides ? (2, 3) : (3, 2)
    precondition(turned.width == width && turned.height == height, "the sides are the orientation's")
    precondition(turned.data.sorted() == image.data.sorted(), "every pixel lands once")
    return 0
}
