import SDFetchCore
import Testing

@Suite("URL identity")
struct URLKeyTests {
    @Test(
        "normalises scheme, host, default port, fragment and empty path",
        arguments: [
            ("HTTP://Example.COM", "http://example.com/"),
            ("https://example.com:443/a.png", "https://example.com/a.png"),
            ("http://example.com:80/a.png#frag", "http://example.com/a.png"),
            ("http://example.com:8080/A.PNG?Q=1", "http://example.com:8080/A.PNG?Q=1"),
            ("http://example.com?x=1", "http://example.com/?x=1"),
            ("https://example.com:80/", "https://example.com:80/"),
            ("http://user:Pw@Example.com/%2F", "http://user:Pw@example.com/%2F"),
            ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ])
    func normalises(input: String, expected: String) throws {
        #expect(try URLKey(parsing: input).string == expected)
    }

    @Test("keeps path, query and percent-encoding byte for byte")
    func keepsPathBytes() throws {
        let a = try URLKey(parsing: "http://h/a%2fb.png?q=A")
        let b = try URLKey(parsing: "http://h/a%2Fb.png?q=A")
        #expect(a != b)
        #expect(a.digest != b.digest)
    }

    @Test(
        "rejects lines that are not absolute http or https URLs",
        arguments: [
            "ftp://example.com/a.png", "example.com/a.png", "/a.png", "http:/a.png", "http://", "http://:80/",
            "http://exa mple.com/", "http://example.com/a\u{1B}b", "http://example.com:99999/", "mailto:x@y",
        ])
    func rejects(input: String) {
        #expect(throws: InvalidURL.self) { try URLKey(parsing: input) }
    }

    @Test("rejects a URL longer than 8192 bytes")
    func rejectsOverlong() {
        let long = "http://h/" + String(repeating: "a", count: 8192)
        #expect(throws: InvalidURL.self) { try URLKey(parsing: long) }
    }

    @Test("digest round-trips through hex")
    func digestHex() throws {
        let digest = try URLKey(parsing: "http://h/x").digest
        #expect(KeyDigest(hex: digest.hex) == digest)
        #expect(digest.hex.count == 32)
    }
}
