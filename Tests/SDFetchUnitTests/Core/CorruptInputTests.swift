import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// Broken variants of the good fixtures, made here from their bytes: each must end as a
/// failure value of the spec's kind, never a crash.
struct CorruptInputTests {
    let full = ImageVerifier(mode: .full)

    // MARK: - Truncated and damaged decodes

    @Test("a PNG truncated inside its image data is corrupt")
    func truncatedPNG() {
        let bytes = Fixture.bytes("tiny-rgba.png")
        #expect(full.verify(Array(bytes.prefix(bytes.count - 20))).failureKind == .corruptImage)
    }

    @Test("a PNG whose image data fails its CRC is corrupt")
    func badCRCPNG() {
        var bytes = Fixture.bytes("tiny-rgba.png")
        let data = Fixture.offset(of: Array("IDAT".utf8), in: bytes) + 6
        bytes[data] ^= 0x55
        #expect(full.verify(bytes).failureKind == .corruptImage)
    }

    @Test("a baseline JPEG truncated inside its scan is corrupt")
    func truncatedBaselineJPEG() {
        let bytes = Fixture.bytes("baseline.jpg")
        #expect(full.verify(Array(bytes.prefix(bytes.count - 30))).failureKind == .corruptImage)
    }

    @Test("a progressive JPEG truncated inside its scans is corrupt")
    func truncatedProgressiveJPEG() {
        let bytes = Fixture.bytes("progressive.jpg")
        #expect(full.verify(Array(bytes.prefix(bytes.count - 30))).failureKind == .corruptImage)
    }

    @Test("a GIF truncated inside its second frame is corrupt")
    func truncatedGIF() {
        let bytes = Fixture.bytes("two-frames.gif")
        #expect(full.verify(Array(bytes.prefix(bytes.count - 10))).failureKind == .corruptImage)
    }

    // MARK: - Not images

    @Test("a zero-byte body is not an image")
    func zeroBytes() {
        #expect(full.verify([]).failureKind == .notAnImage)
    }

    @Test("the first 3 bytes of a PNG are not an image")
    func threeBytes() {
        #expect(full.verify(Array(Fixture.bytes("tiny-rgba.png").prefix(3))).failureKind == .notAnImage)
    }

    @Test("a bare 3-byte JPEG signature is a corrupt JPEG")
    func bareJPEGSignature() {
        #expect(full.verify([0xFF, 0xD8, 0xFF]).failureKind == .corruptImage)
    }

    @Test("an HTML error page is not an image")
    func htmlPage() {
        #expect(full.verify(Fixture.bytes("error-page.html")).failureKind == .notAnImage)
    }

    @Test("a body starting FF 00 is not an image")
    func ff00() {
        #expect(full.verify([0xFF, 0x00, 0x00, 0x10]).failureKind == .notAnImage)
    }

    // MARK: - Decompression bombs

    @Test("a PNG header declaring 50000x50000 is rejected before decoding")
    func pngBomb() {
        var bytes = Fixture.bytes("tiny-rgba.png")
        bytes = Fixture.patching(bytes, uint16BE: 50000, at: 18)
        bytes = Fixture.patching(bytes, uint16BE: 50000, at: 22)
        // The IHDR CRC no longer matches; libpng's header read must not be what rejects it.
        let result = ImageVerifier(mode: .header).verify(bytes)
        #expect(result.failureKind == .tooManyPixels)
        #expect([.tooManyPixels, .corruptImage].contains(full.verify(bytes).failureKind))
    }

    @Test("a PNG with a valid 50000x50000 IHDR is too many pixels under a full verify")
    func pngBombWithValidCRC() {
        let bytes = SampleImages.pngHeader(width: 50000, height: 50000)
        #expect(full.verify(bytes).failureKind == .tooManyPixels)
    }

    @Test("a JPEG frame header declaring 60000x60000 is too many pixels")
    func jpegBomb() {
        var bytes = Fixture.bytes("baseline.jpg")
        let frame = Fixture.offset(of: [0xFF, 0xC0], in: bytes)
        bytes = Fixture.patching(bytes, uint16BE: 60000, at: frame + 5)
        bytes = Fixture.patching(bytes, uint16BE: 60000, at: frame + 7)
        #expect(full.verify(bytes).failureKind == .tooManyPixels)
        #expect(ImageVerifier(mode: .header).verify(bytes).failureKind == .tooManyPixels)
    }

    @Test("a GIF screen declaring 65535x65535 is too many pixels")
    func gifScreenBomb() {
        var bytes = Fixture.bytes("two-frames.gif")
        bytes.replaceSubrange(6..<10, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(full.verify(bytes).failureKind == .tooManyPixels)
    }

    @Test("a GIF frame larger than the limit is rejected even when the screen is small")
    func gifFrameBomb() {
        var bytes = Fixture.bytes("two-frames.gif")
        let descriptor = Fixture.offset(of: [0x2C, 0, 0, 0, 0, 5, 0, 4, 0], in: bytes)
        bytes.replaceSubrange(descriptor + 5..<descriptor + 9, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(ImageVerifier(mode: .full, maxPixels: 1_000_000).verify(bytes).failureKind == .tooManyPixels)
    }

    @Test("an animation whose frames together exceed ten times the limit is too many pixels")
    func animationBudget() {
        let bytes = Fixture.bytes("two-frames.gif")
        // The second frame runs from its graphic control extension to the trailer (3B).
        let secondFrame = Fixture.offset(of: [0x21, 0xF9, 0x04, 0x00, 0x0A, 0x00, 0x00, 0x00, 0x2C], in: bytes)
        let frame = Array(bytes[secondFrame..<bytes.count - 1])
        let twelveFrames = Array(bytes.dropLast()) + Array(repeating: frame, count: 10).flatMap { $0 } + [0x3B]
        // 5x4 frames: 2 of them (40 pixels) fit in 10 x 20; 12 (240 pixels) do not.
        let verifier = ImageVerifier(mode: .full, maxPixels: 20)
        #expect((try? verifier.verify(bytes).get())?.width == 5)
        #expect(verifier.verify(twelveFrames).failureKind == .tooManyPixels)
    }

    // MARK: - Lighter modes

    @Test("verify none accepts a signature-valid truncated PNG")
    func noneAcceptsTruncated() throws {
        let bytes = Array(Fixture.bytes("tiny-rgba.png").prefix(40))
        #expect(try ImageVerifier(mode: VerifyMode.none).verify(bytes).get().format == .png)
    }

    @Test("verify header accepts a JPEG truncated inside its scan")
    func headerAcceptsTruncatedScan() throws {
        let bytes = Fixture.bytes("baseline.jpg")
        let image = try ImageVerifier(mode: .header).verify(Array(bytes.prefix(bytes.count - 30))).get()
        #expect(image.width == 17)
    }

    // MARK: - Header-only formats

    @Test("a WebP cut inside its first chunk header has an unreadable header")
    func truncatedWebPHeader() {
        let bytes = Array(Fixture.bytes("tiny.webp").prefix(20))
        #expect(full.verify(bytes).failureKind == .corruptImage)
    }

    @Test("a WebP shorter than its RIFF size is corrupt under a full verify")
    func truncatedWebP() {
        let bytes = Array(Fixture.bytes("tiny.webp").dropLast(10))
        #expect(full.verify(bytes).failureKind == .corruptImage)
    }

    @Test("a TIFF whose first directory lies past the end is corrupt")
    func tiffDirectoryOutOfBounds() {
        var bytes = Fixture.bytes("tiny.tiff")
        bytes.replaceSubrange(4..<8, with: [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(full.verify(bytes).failureKind == .corruptImage)
    }

    @Test("an icon directory listing no image is corrupt")
    func emptyIconDirectory() {
        var bytes = Fixture.bytes("tiny.ico")
        bytes.replaceSubrange(4..<6, with: [0, 0])
        #expect(full.verify(bytes).failureKind == .corruptImage)
    }

    @Test("a bare JPEG XL signature without a size header is corrupt")
    func bareJXLSignature() {
        #expect(full.verify([0xFF, 0x0A]).failureKind == .corruptImage)
    }

    // MARK: - Failure details

    @Test("a decode failure detail is lower-case, names the format and has no final period")
    func decodeFailureDetailShape() throws {
        // Cut inside the scan, then closed with EOI: sound structure, an incomplete decode.
        let bytes = Fixture.bytes("baseline.jpg")
        let detail = try #require(full.verify(Array(bytes.prefix(bytes.count - 30)) + [0xFF, 0xD9]).failureDetail)
        #expect(detail.hasPrefix("jpeg decode failed: "))
        #expect(detail == detail.lowercased())
        #expect(!detail.hasSuffix("."))
    }
}
