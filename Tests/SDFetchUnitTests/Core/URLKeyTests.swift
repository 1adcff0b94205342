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
            // Lines that look normalised but are not: each must still be rewritten.
            ("Http://example.com/a", "http://example.com/a"),
            ("http://example.com:0080/a", "http://example.com/a"),
            ("http://example.com:08080/a", "http://example.com:8080/a"),
            ("http://example.com:/a", "http://example.com/a"),
            ("http://example.com/a#", "http://example.com/a"),
            ("http://EXÄMPLE.com/a", "http://exämple.com/a"),
            ("http://example.com", "http://example.com/"),
            // Already normalised: kept as written.
            (
                "http://127.0.0.1:18095/mixed-2000/img/000001.jpg?v=3",
                "http://127.0.0.1:18095/mixed-2000/img/000001.jpg?v=3"
            ),
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
            "http://exa mple.com/", "http://example.com/a\u{1B}b", "htt p://h/", "http://example.com:99999/",
            "mailto:x@y",
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

    @Test(
        "rejects what curl would refuse: a second '@', port 0, a host with a byte curl refuses",
        arguments: [
            "http://a@b@host/x.png", "http://u:p@q@host/", "http://host:0/", "http://ho$t/", "http://ho%74/",
            "http://a,b/", "http://[zz::1]/",
        ])
    func curlRefuses(input: String) {
        #expect(throws: InvalidURL.self) { try URLKey(parsing: input) }
    }

    @Test("still accepts one userinfo, IPv6 literals, ports 1-65535 and non-ASCII hosts")
    func curlAccepts() throws {
        for text in [
            "http://u:p@host/a", "http://[::1]:8080/a", "http://host:1/", "http://host:65535/", "http://bücher.de/x",
            "http://[fe80::1%25eth0]/",
        ] {
            #expect(throws: Never.self) { try URLKey(parsing: text) }
        }
    }

    private func reason(_ text: String) -> String? {
        do throws(InvalidURL) {
            _ = try URLKey(parsing: text)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("'not a url' is called no URL, not a URL with a space")
    func notAURL() {
        #expect(reason("not a url") == "not an absolute http or https URL")
        #expect(reason("http://h/a\tb") == "contains a tab")
    }

    @Test(
        "writes userinfo, path and query as a browser sends them",
        arguments: [
            ("http://h/David H. Anderson_2008.jpg", "http://h/David%20H.%20Anderson_2008.jpg"),
            ("http://h/a\\b\\c.png", "http://h/a/b/c.png"),
            ("http://h\\a.png", "http://h/a.png"),
            ("https:\\\\h/a.png", "https://h/a.png"),
            ("http://h/caf\u{E9}.png", "http://h/caf%C3%A9.png"),
            ("http://h/a\"<>`{}^'|.png", "http://h/a%22%3C%3E%60%7B%7D%5E'|.png"),
            ("http://h/x?q=a b&c='\"<>`{}^\\", "http://h/x?q=a%20b&c=%27%22%3C%3E`{}^\\"),
            ("http://u s:p w@h/x", "http://u%20s:p%20w@h/x"),
            ("http://u:p:q;=@h/x", "http://u:p%3Aq%3B%3D@h/x"),
            ("http://h/a%2fb c", "http://h/a%2fb%20c"),
        ])
    func encodesAsBrowsers(input: String, expected: String) throws {
        #expect(try URLKey(parsing: input).string == expected)
    }

    @Test("spellings that encode alike are one key")
    func encodedSpellingsShareAKey() throws {
        let pairs = [
            ("http://h/a b.png", "http://h/a%20b.png"), ("http://h/\u{E4}.png", "http://h/%C3%A4.png"),
            ("http://h\\dir\\a.png", "http://h/dir/a.png"),
        ]
        for (spelling, encoded) in pairs {
            let (a, b) = (try URLKey(parsing: spelling), try URLKey(parsing: encoded))
            #expect(a == b)
            #expect(a.digest == b.digest)
        }
    }

    @Test(
        "a tab, CR, LF, NUL or other control character stays invalid",
        arguments: ["\t", "\r", "\n", "\u{0}", "\u{7F}", "\u{1B}"])
    func controlsStayInvalid(control: String) {
        #expect(throws: InvalidURL.self) { try URLKey(parsing: "http://h/a\(control)b.png") }
    }

    @Test("only the authority's password is left out of the key")
    func keyMasksOnlyTheAuthorityPassword() throws {
        let one = try URLKey(parsing: "http://h/x?src=http://u:ONE@origin/a.png")
        let two = try URLKey(parsing: "http://h/x?src=http://u:TWO@origin/a.png")
        #expect(one != two)
        #expect(one.digest != two.digest)
        // Printing still masks both.
        #expect(one.redacted == two.redacted)
        let first = try URLKey(parsing: "http://u:ONE@h/a.png")
        let second = try URLKey(parsing: "http://u:TWO@h/a.png")
        #expect(first.digest == second.digest)
        #expect(first.digest == KeyDigest(of: "http://u:***@h/a.png"))
    }

    @Test("a password in userinfo is masked, and nothing else changes")
    func redaction() throws {
        #expect(try URLKey(parsing: "http://user:secret@Host/a.png").redacted == "http://user:***@host/a.png")
        #expect(URLKey.redacting("https://u:p%40ss@h:8080/x?y=@z") == "https://u:***@h:8080/x?y=@z")
        #expect(URLKey.redacting("http://user@h/a@b") == "http://user@h/a@b")
        #expect(URLKey.redacting("http://h/a?mail=x:y@z") == "http://h/a?mail=x:y@z")
        #expect(URLKey.redacting("not a url: x@y") == "not a url: x@y")
    }

    @Test(
        "the one URL scanner finds host and port without userinfo, and the last path segment without the query",
        arguments: [
            ("http://h/a/b.png?x=/y", "h", "b.png"),
            ("https://u:p@h:8080/dir/", "h:8080", ""),
            ("http://[::1]:81/x.gif#f", "[::1]:81", "x.gif"),
            ("http://h?q=/a", "h", ""),
            ("http://u@v@h", "h", ""),
        ])
    func spans(url: String, hostAndPort: String, lastSegment: String) throws {
        let spans = try #require(URLSpans(url))
        #expect(spans.hostAndPort(in: url) == hostAndPort)
        #expect(spans.lastSegment(in: url) == lastSegment)
        #expect(URLSpans("no scheme here") == nil)
    }
}
