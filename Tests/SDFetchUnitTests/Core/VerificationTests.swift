import Testing

@testable import SDFetchCore

/// Verification (SDFetchCore.docc) on good files: the right format and the exact size, in
/// every mode.
struct VerificationTests {
    @Test("a full verify reports each good fixture's exact size", arguments: Fixture.goodImages.map { $0.name })
    func fullReportsExactSize(name: String) throws {
        let expected = try #require(Fixture.goodImages.first { $0.name == name })
        let image = try ImageVerifier(mode: .full).verify(Fixture.bytes(name)).get()
        #expect(image.format.name == expected.format)
        #expect(image.width == expected.width)
        #expect(image.height == expected.height)
    }

    @Test("a header verify reports each good fixture's exact size", arguments: Fixture.goodImages.map { $0.name })
    func headerReportsExactSize(name: String) throws {
        let expected = try #require(Fixture.goodImages.first { $0.name == name })
        let image = try ImageVerifier(mode: .header).verify(Fixture.bytes(name)).get()
        #expect(image.width == expected.width)
        #expect(image.height == expected.height)
    }

    @Test("verify none reports the format without reading a size")
    func noneReportsFormatOnly() throws {
        let image = try ImageVerifier(mode: VerifyMode.none).verify(Fixture.bytes("tiny-rgba.png")).get()
        #expect(image == VerifiedImage(format: .png))
    }

    @Test("a limit of exactly width times height accepts the image")
    func limitEqualToPixelCountAccepts() {
        let result = ImageVerifier(mode: .full, maxPixels: 17 * 9).verify(Fixture.bytes("baseline.jpg"))
        #expect((try? result.get())?.width == 17)
    }

    @Test("a limit one below width times height rejects the image as too many pixels")
    func limitBelowPixelCountRejects() {
        let result = ImageVerifier(mode: .full, maxPixels: 17 * 9 - 1).verify(Fixture.bytes("baseline.jpg"))
        #expect(result.failureKind == .tooManyPixels)
    }

    @Test("the pixel limit applies to header dimensions of formats that are not decoded")
    func limitAppliesToHeaderOnlyFormats() {
        let result = ImageVerifier(mode: .full, maxPixels: 10).verify(Fixture.bytes("tiny.webp"))
        #expect(result.failureKind == .tooManyPixels)
    }

    @Test("the pixel limit applies to a declared SVG size")
    func limitAppliesToSVG() {
        let svg = Array("<svg width=\"100000\" height=\"100000\"/>".utf8)
        #expect(ImageVerifier(mode: .full).verify(svg).failureKind == .tooManyPixels)
    }

    @Test("an SVG sized in percent has no dimensions but is accepted")
    func svgInPercentHasNoSize() throws {
        let svg = Array("<svg width=\"100%\" height=\"50%\"></svg>".utf8)
        let image = try ImageVerifier(mode: .full).verify(svg).get()
        #expect(image == VerifiedImage(format: .svg))
    }
}

extension Result where Failure == FetchFailure {
    /// The failure's kind, nil on success: what most verification tests assert.
    var failureKind: FetchFailure.Kind? {
        if case .failure(let failure) = self { return failure.kind }
        return nil
    }

    var failureDetail: String? {
        if case .failure(let failure) = self { return failure.detail }
        return nil
    }
}
