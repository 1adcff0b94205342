import Testing

@testable import SDFetchCore

/// SDFetchCore.docc, Verification, "A browser's verdict": at every level the verdict is a
/// browser's. Files with quirks that decoders tolerate and browsers display are accepted
/// by `header`, `structure` and `full` alike, because a false `corrupt-image` blacklists a
/// good URL for a week.
struct BrowserQuirkTests {
    /// A quirky file, named by its quirk, with the size every level must report.
    struct Quirk: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: @Sendable () -> [UInt8]
        let width: Int
        var testDescription: String { name }
    }

    static let quirks: [Quirk] = [
        Quirk(
            name: "jpeg with extraneous bytes before a marker",
            bytes: {
                var bytes = Fixture.bytes("baseline.jpg")
                let table = Fixture.offset(of: [0xFF, 0xDB], in: bytes)
                bytes.insert(contentsOf: [0x00, 0x12, 0x34, 0x56], at: table)
                return bytes
            }, width: 17),
        Quirk(
            name: "jpeg with a broken exif segment",
            bytes: {
                var bytes = Fixture.bytes("baseline.jpg")
                let exif = CraftedImages.segment(
                    0xE1, Array("Exif".utf8) + [0, 0, 0x4D, 0x4D, 0x00, 0x2A, 0xFF, 0xFF, 0xFF, 0xFF, 0x13])
                bytes.insert(contentsOf: exif, at: 2)
                return bytes
            }, width: 17),
        Quirk(
            name: "jpeg with a truncated adobe app14 segment",
            bytes: {
                var bytes = Fixture.bytes("baseline.jpg")
                bytes.insert(contentsOf: CraftedImages.segment(0xEE, Array("Adobe".utf8) + [0x00]), at: 2)
                return bytes
            }, width: 17),
        Quirk(
            name: "jpeg with bytes after EOI",
            bytes: {
                Fixture.bytes("progressive.jpg") + Array("trailing garbage\0\u{FF}".utf8)
            }, width: 17),
        Quirk(
            name: "12-bit jpeg",
            bytes: {
                // The baseline's frame header marked SOF1 at 12 bits: structurally sound; the
                // system libjpeg decodes 8-bit samples only.
                var bytes = Fixture.bytes("baseline.jpg")
                let frame = Fixture.offset(of: [0xFF, 0xC0], in: bytes)
                bytes[frame + 1] = 0xC1
                bytes[frame + 4] = 12
                return bytes
            }, width: 17),
        Quirk(name: "arithmetic-coded jpeg", bytes: { Fixture.bytes("arithmetic.jpg") }, width: 17),
        Quirk(
            name: "lossless jpeg",
            bytes: {
                var bytes = Fixture.bytes("baseline.jpg")
                let frame = Fixture.offset(of: [0xFF, 0xC0], in: bytes)
                bytes[frame + 1] = 0xC3
                return bytes
            }, width: 17),
        Quirk(
            name: "png with bytes after IEND",
            bytes: {
                CraftedImages.png(width: 5, height: 3, after: Array("<html>junk</html>".utf8))
            }, width: 5),
        Quirk(
            name: "png with an ancillary chunk failing its crc",
            bytes: {
                CraftedImages.png(
                    width: 5, height: 3, between: CraftedImages.pngChunk("tEXt", Array("a\0b".utf8), crcFlip: 7))
            }, width: 5),
        Quirk(
            name: "apng with num_frames 0",
            bytes: {
                let control = CraftedImages.bigEndian32(0) + CraftedImages.bigEndian32(0)
                let frame =
                    CraftedImages.bigEndian32(0) + CraftedImages.bigEndian32(5) + CraftedImages.bigEndian32(3)
                    + [UInt8](repeating: 0, count: 8) + [0, 1, 0, 100, 0, 0]
                return CraftedImages.png(
                    width: 5, height: 3,
                    between: CraftedImages.pngChunk("acTL", control) + CraftedImages.pngChunk("fcTL", frame))
            }, width: 5),
        Quirk(
            name: "gif frame reaching past the screen",
            bytes: {
                var bytes = Fixture.bytes("two-frames.gif")
                let descriptor = Fixture.offset(of: [0x2C, 0, 0, 0, 0, 5, 0, 4, 0], in: bytes)
                bytes[descriptor + 1] = 3  // left 3 + width 5 > screen width 5
                bytes[descriptor + 3] = 2
                return bytes
            }, width: 5),
        Quirk(
            name: "jpeg with a bad code confined to one restart interval",
            bytes: {
                // libjpeg warns of a bad Huffman code here and resyncs at the next marker.
                var bytes = Fixture.bytes("restarts.jpg")
                bytes[Fixture.offset(of: [0xFF, 0xD2], in: bytes) + 22] = 0xFE
                return bytes
            }, width: 64),
        Quirk(
            name: "gif whose lzw codes start at 12 bits",
            bytes: {
                // A 1x1 frame with minimum code size 11, beyond giflib's 8, as browsers decode:
                // clear (2048), pixel 0, end (2049), 12 bits each, least significant first.
                let screen: [UInt8] = Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0]
                return screen + [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 11, 5, 0x00, 0x08, 0x00, 0x01, 0x08, 0, 0x3B]
            }, width: 1),
        Quirk(
            name: "gif followed by a second gif instead of a trailer",
            bytes: { Fixture.bytes("gif-then-second-gif.gif") }, width: 4),
        Quirk(
            name: "gif with a byte that starts no block where its second frame should start",
            bytes: {
                var bytes = Fixture.bytes("two-frames.gif")
                let first = Fixture.offset(of: [0x2C, 0, 0, 0, 0, 5, 0, 4, 0], in: bytes)
                let rest = Array(bytes[(first + 1)...])
                let second = first + 1 + Fixture.offset(of: [0x2C, 0, 0, 0, 0, 5, 0, 4, 0], in: rest)
                bytes[second] = 0x99
                return bytes
            }, width: 5),
        Quirk(
            name: "png whose image data is complete and whose IEND is cut short",
            bytes: { Fixture.bytes("png-end-cut-short.png") }, width: 6),
        Quirk(
            name: "apng declaring 0 frames, shown as its still image",
            bytes: { Fixture.bytes("apng-zero-frames.png") }, width: 5),
        Quirk(
            name: "gif with bytes after the trailer",
            bytes: {
                Fixture.bytes("two-frames.gif") + [0x00, 0x21, 0xFF]
            }, width: 5),
    ]

    @Test("every level accepts a quirk browsers display", arguments: quirks, [VerifyMode.header, .structure, .full])
    func accepted(quirk: Quirk, mode: VerifyMode) throws {
        let result = ImageVerifier(mode: mode).verify(quirk.bytes())
        #expect(result.failureDetail == nil)
        #expect(try result.get().width == quirk.width)
    }

    @Test("full rejects a bad code in a scan without restart markers, whose rest is lost")
    func fullRejectsBadCodeWithoutRestarts() {
        var bytes = Fixture.bytes("baseline.jpg")
        let scan = Fixture.offset(of: [0xFF, 0xDA], in: bytes)
        bytes[scan + 2 + 12] = 0x00  // the first byte of entropy-coded data
        #expect(ImageVerifier(mode: .structure).verify(bytes).failureDetail == nil)
        #expect(ImageVerifier(mode: .full).verify(bytes).failureKind == .corruptImage)
    }

    @Test("full still rejects a scan cut short and closed with EOI, which structure cannot see")
    func fullRejectsIncompleteScan() {
        let bytes = Fixture.bytes("baseline.jpg")
        let cut = Array(bytes.prefix(bytes.count - 30)) + [0xFF, 0xD9]
        #expect(ImageVerifier(mode: .structure).verify(cut).failureDetail == nil)
        #expect(ImageVerifier(mode: .full).verify(cut).failureKind == .corruptImage)
    }
}
