import FoundationEssentials
import Testing

@testable import SDFetchCore

/// `Retry-After` in both of its forms, read without Foundation's date formatter.
@Suite("Retry-After parsing")
struct RetryAfterTests {
    @Test("an HTTP date gives the seconds until it; seconds are taken as they are; junk gives nil")
    func forms() {
        let now = Date(timeIntervalSince1970: 784_111_747)  // Sun, 06 Nov 1994 08:49:07 GMT
        #expect(RetryAfter.seconds(from: "Sun, 06 Nov 1994 08:49:37 GMT", now: now) == 30)
        #expect(RetryAfter.seconds(from: "Sun, 06 Nov 1994 08:48:37 GMT", now: now) == 0)
        #expect(RetryAfter.seconds(from: "120", now: now) == 120)
        #expect(RetryAfter.httpDate("Wed, 21 Oct 2015 07:28:00 GMT")?.timeIntervalSince1970 == 1_445_412_480)
        for junk in ["soon", "-5", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 GMT trailing", ""] {
            #expect(RetryAfter.seconds(from: junk, now: now) == nil, "\(junk)")
        }
    }
}
