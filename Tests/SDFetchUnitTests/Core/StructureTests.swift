import Testing

@testable import SDFetchCore

/// The `structure` level (SDFetchCore.docc, Verification, "Levels"): every byte's place
/// checked without decoding. Good files of every kind pass; truncations, bad CRCs,
/// missing end markers and broken chains are `corrupt-image`.
struct StructureTests {
    let structure = ImageVerifier(mode: .structure)

    // MARK: - Good files

    @Test("structure is the default level")
    func structureIsDefault() {
        #expect(ImageVerifier().mode == .structure)
        #expect(FetchOptions().verify == .structure)
    }

    @Test("structure reports each good fixture's exact size", arguments: Fixture.goodImages.map { $0.name })
    func structureReportsExactSize(name: String) throws {
        let expected = try #require(Fixture.goodImages.first { $0.name == name })
        let image = try structure.verify(Fixture.bytes(name)).get()
        #expect(image.format.name == expected.format)
        #expect(image.width == expected.width)
        #expect(image.height == expected.height)
    }

    @Test("structure accepts an interlaced PNG, whose data spans all seven Adam7 passes")
    func interlacedPNG() throws {
        let image = try structure.verify(CraftedImages.png(width: 13, height: 11, interlaced: true)).get()
        #expect(image.width == 13)
        #expect(
            try ImageVerifier(mode: .full).verify(CraftedImages.png(width: 13, height: 11, interlaced: true)).get()
                .height == 11)
    }

    @Test(
        "structure accepts JPEGs with restart markers, arithmetic coding and progressive scans",
        arguments: ["restarts.jpg", "arithmetic.jpg", "progressive.jpg"])
    func jpegKinds(name: String) throws {
        #expect(try structure.verify(Fixture.bytes(name)).get().format == .jpeg)
    }

    // MARK: - Truncation

    @Test(
        "every truncation of a PNG, JPEG, GIF and WebP fixture is corrupt",
        arguments: ["tiny-rgba.png", "baseline.jpg", "progressive.jpg", "restarts.jpg", "two-frames.gif", "tiny.webp"])
    func everyTruncation(name: String) {
        let bytes = Fixture.bytes(name)
        // From just past the signature sniffing needs to one byte short of the end; for the
        // PNG, to the end of its image data (IEND follows it: a cut after it is accepted).
        let end = name.hasSuffix(".png") ? bytes.count - 12 : bytes.count
        for length in 12..<end {
            let kind = structure.verify(Array(bytes.prefix(length))).failureKind
            #expect(
                kind == .corruptImage,
                "\(name) cut to \(length) of \(bytes.count) bytes gave \(String(describing: kind))")
        }
    }

    @Test("a truncated interlaced PNG is corrupt")
    func truncatedInterlaced() {
        let bytes = CraftedImages.png(width: 300, height: 200, interlaced: true)
        #expect(structure.verify(Array(bytes.prefix(bytes.count - 16))).failureKind == .corruptImage)
    }

    // MARK: - PNG

    @Test("a PNG whose IDAT fails its CRC is corrupt")
    func badIDATCRC() {
        let bytes =
            CraftedImages.pngSignature
            + CraftedImages.pngChunk("IHDR", CraftedImages.ihdr(width: 2, height: 2))
            + CraftedImages.pngChunk("IDAT", CraftedImages.deflateZeros(count: 14), crcFlip: 1)
            + CraftedImages.pngChunk("IEND", [])
        #expect(structure.verify(bytes).failureDetail == "png structure: idat chunk fails its crc")
    }

    @Test(
        "a PNG cut after its complete image data is accepted at every level, wherever the cut falls",
        arguments: [VerifyMode.structure, .full])
    func cutAfterImageData(mode: VerifyMode) throws {
        let bytes = CraftedImages.png(width: 4, height: 4)
        let verifier = ImageVerifier(mode: mode)
        // Inside IEND (cut short), before it (missing), or inside a chunk after the image
        // data (a chunk header with no body, as a cut download leaves it).
        var cuts = (1...12).map { Array(bytes.dropLast($0)) }
        cuts.append(Array(bytes.dropLast(12)) + Array(CraftedImages.pngChunk("tEXt", Array("a\0b".utf8)).prefix(8)))
        for cut in cuts {
            #expect(try verifier.verify(cut).get().width == 4, "cut to \(cut.count) of \(bytes.count) bytes")
        }
    }

    @Test("a PNG whose image data ends early is corrupt, even with a cut IEND after it")
    func imageDataEndsEarly() {
        let rows = 4 * 13
        let end = Array(CraftedImages.pngChunk("IEND", []).prefix(6))
        let header =
            CraftedImages.pngSignature + CraftedImages.pngChunk("IHDR", CraftedImages.ihdr(width: 4, height: 4))
        // A complete zlib stream of too few rows, then a stream split over two IDATs whose second is lost.
        let short = header + CraftedImages.pngChunk("IDAT", CraftedImages.deflateZeros(count: rows - 13)) + end
        let stream = CraftedImages.deflateZeros(count: rows)
        let split = header + CraftedImages.pngChunk("IDAT", Array(stream.prefix(stream.count / 2))) + end
        #expect(structure.verify(short).failureKind == .corruptImage)
        #expect(structure.verify(split).failureKind == .corruptImage)
    }

    @Test("an APNG declaring 0 frames and holding no image data is corrupt: there is nothing to draw")
    func zeroFramesNoImageData() {
        let bytes =
            CraftedImages.pngSignature
            + CraftedImages.pngChunk("IHDR", CraftedImages.ihdr(width: 4, height: 4, colourType: 6))
            + CraftedImages.pngChunk("acTL", CraftedImages.bigEndian32(0) + CraftedImages.bigEndian32(0))
            + CraftedImages.pngChunk("IEND", [])
        #expect(structure.verify(bytes).failureKind == .corruptImage)
    }

    @Test("a PNG whose image data is shorter than IHDR declares is corrupt")
    func shortImageData() {
        let bytes = CraftedImages.png(width: 4, height: 4, rawBytes: 4 * 13 - 1)
        #expect(structure.verify(bytes).failureKind == .corruptImage)
    }

    @Test("a PNG whose image data inflates past what IHDR declares is corrupt")
    func longImageData() {
        let bytes = CraftedImages.png(width: 4, height: 4, rawBytes: 4 * 13 + 1)
        #expect(structure.verify(bytes).failureKind == .corruptImage)
    }

    @Test("a PNG whose zlib stream is damaged is corrupt")
    func damagedZlib() {
        let bytes =
            CraftedImages.pngSignature
            + CraftedImages.pngChunk("IHDR", CraftedImages.ihdr(width: 2, height: 2))
            + CraftedImages.pngChunk("IDAT", [0x78, 0x9C, 0xFF, 0xFF, 0xFF, 0xFF])
            + CraftedImages.pngChunk("IEND", [])
        #expect(structure.verify(bytes).failureKind == .corruptImage)
    }

    // MARK: - JPEG

    @Test("a JPEG without EOI is corrupt")
    func missingEOI() {
        #expect(structure.verify(Array(Fixture.bytes("baseline.jpg").dropLast(2))).failureKind == .corruptImage)
    }

    @Test("a JPEG whose restart markers are out of order is corrupt")
    func restartsOutOfOrder() {
        var bytes = Fixture.bytes("restarts.jpg")
        let third = Fixture.offset(of: [0xFF, 0xD2], in: bytes)
        bytes[third + 1] = 0xD5
        #expect(structure.verify(bytes).failureDetail == "jpeg structure: restart markers out of order")
    }

    @Test("a stray marker inside entropy-coded data is corrupt")
    func strayMarker() {
        var bytes = Fixture.bytes("restarts.jpg")
        let restart = Fixture.offset(of: [0xFF, 0xD3], in: bytes)
        bytes[restart + 1] = 0x01
        #expect(structure.verify(bytes).failureKind == .corruptImage)
    }

    @Test("a JPEG without any scan is corrupt")
    func noScan() {
        let bytes = Fixture.bytes("baseline.jpg")
        let scan = Fixture.offset(of: [0xFF, 0xDA], in: bytes)
        #expect(structure.verify(Array(bytes.prefix(scan)) + [0xFF, 0xD9]).failureKind == .corruptImage)
    }

    // MARK: - GIF

    @Test("a GIF without its trailer is corrupt")
    func missingTrailer() {
        #expect(structure.verify(Array(Fixture.bytes("two-frames.gif").dropLast())).failureKind == .corruptImage)
    }

    @Test("a GIF whose sub-block chain runs past the end is corrupt")
    func brokenSubBlockChain() {
        var bytes = Fixture.bytes("two-frames.gif")
        // The first image's LZW data: descriptor (10 bytes), code size, then the first sub-block size.
        let descriptor = Fixture.offset(of: [0x2C, 0, 0, 0, 0, 5, 0, 4, 0], in: bytes)
        bytes[descriptor + 11] = 0xFE
        #expect(structure.verify(bytes).failureKind == .corruptImage)
    }

    @Test("a GIF with an unknown block before its first image is corrupt")
    func unknownBlock() {
        var bytes = Fixture.bytes("two-frames.gif")
        let descriptor = Fixture.offset(of: [0x2C, 0, 0, 0, 0, 5, 0, 4, 0], in: bytes)
        bytes[descriptor] = 0x99
        #expect(structure.verify(bytes).failureKind == .corruptImage)
    }

    // MARK: - WebP

    @Test("a WebP chunk reaching past the RIFF payload is corrupt")
    func webpChunkPastRIFF() {
        var bytes = Fixture.bytes("tiny.webp")
        bytes.replaceSubrange(16..<20, with: [0xFF, 0xFF, 0, 0])
        #expect(structure.verify(bytes).failureKind == .corruptImage)
    }

    // MARK: - Limits

    @Test(
        "structure applies the pixel limit to PNG, JPEG and GIF",
        arguments: ["tiny-rgba.png", "baseline.jpg", "two-frames.gif"])
    func pixelLimit(name: String) {
        #expect(ImageVerifier(mode: .structure, maxPixels: 5).verify(Fixture.bytes(name)).failureKind == .tooManyPixels)
    }
}
