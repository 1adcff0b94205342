@testable import SDFetchCore

/// libFuzzer entry point over AVIF through libavif: the container parse and the declared
/// size's check (``AVIFFile``), `--verify full`'s decode of every frame (``AVIFVerifier``)
/// and the resize path's RGB conversion and `irot`/`imir` turns (``AVIFPixels``).
///
/// Every input is handed to both as an AVIF, whatever sniffing says, so the mutations of the
/// seeds (the AVIF fixtures, Tests/sdfetchTests/Fixtures/*.avif) all reach libavif. The
/// limit is lower than the product's (see `VerifyFuzzer`), and the budget of its own.
@_cdecl("LLVMFuzzerTestOneInput")
public func avifFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    if case .success(let image) = AVIFVerifier.decode(input.bytes, maxPixels: 1_000_000),
        image.width <= 0 || image.height <= 0
    {
        fatalError("an AVIF verified with a \(image.width)x\(image.height) size")
    }
    let lease = PixelLease(budget)
    defer { lease.end() }
    if case .success(let pixels) = AVIFPixels.decode(input.bytes, maxPixels: 1_000_000, lease: lease),
        pixels.data.count != pixels.width * pixels.height * pixels.channels
    {
        fatalError("AVIF pixels of \(pixels.data.count) bytes for \(pixels.width)x\(pixels.height)")
    }
    return 0
}

private let budget = PixelBudget(capacity: 1 << 20)
