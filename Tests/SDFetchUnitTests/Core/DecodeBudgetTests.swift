import Testing

@testable import SDFetchCore

/// SDFetchCore.docc, Verification, "Budgets": every decoder and walker works within a
/// budget proportional to the image it declares, and stops when its task is cancelled.
/// The bombs are built here (``CraftedImages``); each would cost seconds of CPU or
/// gigabytes of memory without its budget.
struct DecodeBudgetTests {
    @Test(
        "a 1x1 PNG whose image data inflates to 64 MB is corrupt at every decoding level",
        arguments: [VerifyMode.structure, .full])
    func pngInflateBomb(mode: VerifyMode) {
        let bomb = CraftedImages.png(width: 1, height: 1, rawBytes: 64 << 20)
        let result = ImageVerifier(mode: mode).verify(bomb)
        #expect(result.failureDetail == "png structure: image data inflates past the 4 bytes ihdr declares")
    }

    @Test("a progressive 10000x10000 JPEG of 400 scans over every block is refused by the scan budget")
    func jpegScanBomb() {
        let bomb = CraftedImages.jpegScanBomb(width: 10000, height: 10000, scans: 400)
        #expect(bomb.count < 100_000)
        #expect(ImageVerifier(mode: .structure).verify(bomb).failureDetail == nil)
        let result = ImageVerifier(mode: .full).verify(bomb)
        #expect(result.failureKind == .tooManyPixels)
        #expect(result.failureDetail?.contains("scans revisit the image") == true)
    }

    @Test("a progressive JPEG of the same kind with a few scans decodes within the budget")
    func jpegFewScans() throws {
        let image = CraftedImages.jpegScanBomb(width: 2000, height: 2000, scans: 4)
        #expect(try ImageVerifier(mode: .full).verify(image).get().width == 2000)
    }

    @Test("a progressive 10000x10000 JPEG of 10 components is refused before its 2 GB of coefficients exist")
    func jpegMemoryBomb() {
        let bomb = CraftedImages.jpegScanBomb(width: 10000, height: 10000, scans: 1, components: 10)
        let result = ImageVerifier(mode: .full).verify(bomb)
        #expect(result.failureKind == .tooManyPixels)
        #expect(result.failureDetail?.contains("256 mib") == true)
    }

    @Test("a JPEG decode in a cancelled task stops as interrupted")
    func cancelledJPEGDecode() async {
        let image = CraftedImages.jpegScanBomb(width: 4000, height: 4000, scans: 8)
        let task = Task { ImageVerifier(mode: .full).verify(image) }
        task.cancel()
        #expect(await task.value.failureKind == .interrupted)
    }

    @Test("a GIF decode in a cancelled task stops as interrupted")
    func cancelledGIFDecode() async {
        // One 2000x2000 frame whose LZW data is all zero bits (literal codes for colour 0),
        // enough for the 256 rows after which the decoder looks at its task.
        let screen: [UInt8] = Array("GIF89a".utf8) + [0xD0, 0x07, 0xD0, 0x07, 0, 0, 0]
        let frame: [UInt8] = [0x2C, 0, 0, 0, 0, 0xD0, 0x07, 0xD0, 0x07, 0, 8]
        let data = [UInt8](repeating: 0, count: 255)
        let image = screen + frame + Array(repeating: [255] + data, count: 4000).flatMap { $0 } + [0, 0x3B]
        let task = Task { ImageVerifier(mode: .full).verify(image) }
        task.cancel()
        #expect(await task.value.failureKind == .interrupted)
    }

    @Test("a PNG walk in a cancelled task stops as interrupted")
    func cancelledPNGWalk() async {
        let image = CraftedImages.png(width: 4000, height: 4000)
        let task = Task { ImageVerifier(mode: .structure).verify(image) }
        task.cancel()
        #expect(await task.value.failureKind == .interrupted)
    }
}
