import Glibc
import Testing

@testable import SDFetchCore

/// ``Redaction/masked(_:)``, the one masking function: passwords in URLs and URL-ish text
/// go, everything else stays byte for byte.
@Suite("Redaction")
struct RedactionTests {
    @Test(
        "a URL's password is masked, the rest kept",
        arguments: [
            ("http://alice:S3CRET@host/a.png", "http://alice:***@host/a.png"),
            ("https://alice:S3CRET@host:8443/a.png?x=1", "https://alice:***@host:8443/a.png?x=1"),
            ("http://alice:8080@host/", "http://alice:***@host/"),
        ])
    func validURLs(text: String, masked: String) {
        #expect(Redaction.masked(text) == masked)
    }

    @Test(
        "mangled input lines are masked too",
        arguments: [
            ("https:/alice:S@h/x.png", "https:/alice:***@h/x.png"),
            ("//alice:S@h/x.png", "//alice:***@h/x.png"),
            ("http://alice:pa/S@h/x.png", "http://alice:***@h/x.png"),
            ("http://alice:p#S@h/x.png", "http://alice:***@h/x.png"),
            ("http://alice:p?S@h/x.png", "http://alice:***@h/x.png"),
            ("http://alice:pa ss@h/x.png", "http://alice:***@h/x.png"),
            ("http://alice:p a\tss w@h/x.png", "http://alice:***@h/x.png"),
        ])
    func invalidLines(text: String, masked: String) {
        #expect(Redaction.masked(text) == masked)
    }

    @Test("a proxy URL quoted in curl's message is masked")
    func curlMessages() {
        #expect(
            Redaction.masked("unsupported proxy syntax in 'foo://user:PX@127.0.0.1:9'")
                == "unsupported proxy syntax in 'foo://user:***@127.0.0.1:9'")
        #expect(Redaction.masked("proxy socks9://u:E@h:1 refused") == "proxy socks9://u:***@h:1 refused")
    }

    @Test(
        "text without a password is returned unchanged",
        arguments: [
            "http://host/a.png", "http://host:8080/x?mail=a@b.com", "http://user@host/a.png", "http://h/a/b@c:d",
            "sdfetch: 3 URLs", "mailbox@example", "http://host:8080 is down; mail ops@example",
            "connect to http://h:8080 failed: 'user@h'",
        ])
    func unchanged(text: String) {
        #expect(Redaction.masked(text) == text)
    }
}

/// The key of a URL with a password: nothing in a cache can check a guess of it.
@Suite("keys without passwords")
struct PasswordFreeKeyTests {
    @Test("the digest is the masked URL's: two passwords, one key; the password changes nothing stored")
    func digestLeavesThePasswordOut() throws {
        let right = try URLKey(parsing: "http://alice:right@h/a.png")
        let wrong = try URLKey(parsing: "http://alice:wrong@h/a.png")
        #expect(right.digest == wrong.digest)
        #expect(right.digest == KeyDigest(of: "http://alice:***@h/a.png"))
        #expect(right != wrong)
        #expect(try URLKey(parsing: "http://h/a.png").digest == KeyDigest(of: "http://h/a.png"))
    }

    @Test("a word of many scheme-like `x:/` and one `@` is masked in time linear in its length")
    func manySchemesOneWord() {
        // Every `:/` starts an authority whose `:` is no port's: each asks for the next `@`.
        // The CPU time of this thread, not the wall clock: other work on the machine cannot
        // stretch it. 2 s is some 50 times what the linear search takes in a debug build;
        // a scan to the word's end per `:/` (5,000 million bytes here) takes minutes.
        let word = String(repeating: "a:/b:c", count: 200_000 / 6) + "@h"
        let start = Self.threadCPUSeconds()
        let masked = Redaction.masked(word)
        let seconds = Self.threadCPUSeconds() - start
        #expect(seconds < 2, "\(seconds) s of CPU for \(word.utf8.count) bytes")
        // The first authority's password runs to the `@`, as a shorter word's does.
        #expect(masked == "a:/b:***@h")
        #expect(Redaction.masked("a:/b:ca:/b:c@h") == "a:/b:***@h")
    }

    private static func threadCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
