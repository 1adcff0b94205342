import Testing

@testable import SDFetchCore

/// Format sniffing (SDFetchCore.docc, Verification): the leading bytes alone decide,
/// and anything unknown is nil.
struct SniffingTests {
    @Test("each good fixture is sniffed as its format", arguments: Fixture.goodImages.map { ($0.name, $0.format) })
    func sniffsFixture(name: String, format: String) {
        #expect(ImageFormat.sniff(Fixture.bytes(name))?.name == format)
    }

    @Test("an HTML error page that embeds an svg element is not an image")
    func htmlWithSVGIsNotAnImage() {
        #expect(ImageFormat.sniff(Fixture.bytes("error-page.html")) == nil)
    }

    @Test("zero bytes are not an image")
    func emptyIsNotAnImage() {
        #expect(ImageFormat.sniff([UInt8]()) == nil)
    }

    @Test("the first three bytes of a PNG signature are not an image")
    func shortPNGSignatureIsNotAnImage() {
        #expect(ImageFormat.sniff([0x89, 0x50, 0x4E]) == nil)
    }

    @Test("a body starting FF 00 is not an image")
    func ff00IsNotAnImage() {
        #expect(ImageFormat.sniff([0xFF, 0x00] + Array(repeating: 0x41, count: 64)) == nil)
    }

    @Test("text starting with BM is not a bitmap")
    func textStartingBMIsNotABitmap() {
        #expect(ImageFormat.sniff(Array("BMW owners club: welcome to our page".utf8)) == nil)
    }

    @Test("an MP4 video ftyp box is not an image")
    func mp4IsNotAnImage() {
        let box: [UInt8] = [0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8)
        #expect(ImageFormat.sniff(box) == nil)
    }

    @Test("a generic mif1 major brand with an avif compatible brand is AVIF")
    func mif1WithAVIFBrandIsAVIF() {
        let box: [UInt8] = [0, 0, 0, 0x18] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8)
        #expect(ImageFormat.sniff(box) == .avif)
    }

    @Test("a file with only the mif1 brand is HEIF")
    func mif1AloneIsHEIF() {
        let box: [UInt8] = [0, 0, 0, 0x14] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1".utf8)
        #expect(ImageFormat.sniff(box) == .heif)
    }

    @Test("an SVG root after whitespace and a processing instruction is SVG")
    func svgAfterPrologIsSVG() {
        #expect(ImageFormat.sniff(Array("\n  <?xml version=\"1.0\"?>\n<svg/>".utf8)) == .svg)
    }

    @Test("an element merely starting with svg is not SVG")
    func svgPrefixedElementIsNotSVG() {
        #expect(ImageFormat.sniff(Array("<svgfoo width=\"1\"></svgfoo>".utf8)) == nil)
    }

    @Test("a comment left open before the root is not an image")
    func unclosedCommentIsNotAnImage() {
        #expect(ImageFormat.sniff(Array("<!-- <svg width=\"1\"/>".utf8)) == nil)
    }

    @Test("a doctype with an internal subset containing > is skipped")
    func doctypeSubsetIsSkipped() {
        let text = "<!DOCTYPE svg [ <!ENTITY a \"x>y\"> ]>\n<svg width=\"2\" height=\"3\"/>"
        #expect(ImageFormat.sniff(Array(text.utf8)) == .svg)
    }

    @Test("a root element beyond the sniffing window is not found")
    func rootBeyondWindowIsNotAnImage() {
        let text = "<!--" + String(repeating: "x", count: SVGSniffer.window) + "--><svg/>"
        #expect(ImageFormat.sniff(Array(text.utf8)) == nil)
    }
}
