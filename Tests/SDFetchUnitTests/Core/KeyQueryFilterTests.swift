import SDFetchCore
import Testing

@Suite("--key-ignore-query: parameters left out of the key, still requested")
struct KeyQueryFilterTests {
    private func key(_ url: String, _ patterns: [String]) throws -> URLKey {
        KeyQueryFilter(patterns: patterns).apply(to: try URLKey(parsing: url))
    }

    @Test("matching parameters leave the key and its digest; the request keeps them")
    func leavesKey() throws {
        let signed = try key("https://b.s3.amazonaws.com/a.png?v=1&X-Amz-Date=1&X-Amz-Signature=ab", ["X-Amz-*"])
        let plain = try URLKey(parsing: "https://b.s3.amazonaws.com/a.png?v=1")
        #expect(signed.string == "https://b.s3.amazonaws.com/a.png?v=1")
        #expect(signed.request == "https://b.s3.amazonaws.com/a.png?v=1&X-Amz-Date=1&X-Amz-Signature=ab")
        #expect(signed.digest == plain.digest && signed == plain)
    }

    @Test("names match ignoring case; a query left empty loses its '?'; other keys are untouched")
    func shapes() throws {
        let cloudFront = try key(
            "https://d.cloudfront.net/a.jpg?Expires=1&Signature=x&Key-Pair-Id=K",
            ["expires", "signature", "key-pair-id"])
        #expect(cloudFront.string == "https://d.cloudfront.net/a.jpg")
        #expect(cloudFront.request.hasSuffix("?Expires=1&Signature=x&Key-Pair-Id=K"))
        let untouched = try key("https://h/a.jpg?size=2&&x", ["X-Goog-*"])
        #expect(untouched.string == "https://h/a.jpg?size=2&&x" && untouched.request == untouched.string)
        let noPatterns = try key("https://h/a.jpg?Signature=1", [])
        #expect(noPatterns.string == "https://h/a.jpg?Signature=1")
    }
}
