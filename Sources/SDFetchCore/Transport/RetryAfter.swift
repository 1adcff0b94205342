internal import CSDFetchShims
import FoundationEssentials
import Glibc

/// Parses the `Retry-After` header (RFC 9110 §10.2.3): delay seconds or an HTTP date.
enum RetryAfter {
    static func seconds(from value: String, now: Date = Date()) -> Double? {
        if let delta = Double(value), delta >= 0 { return delta }
        guard let date = httpDate(value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// The IMF-fixdate form, `Sun, 06 Nov 1994 08:49:37 GMT`, the one senders must use.
    ///
    /// libc's `strptime` and `timegm` rather than Foundation's `DateFormatter`, which would
    /// link the full Foundation and ICU into the binary. The process never calls `setlocale`,
    /// so `strptime` reads the English day and month names of the C locale.
    static func httpDate(_ text: String) -> Date? {
        var fields = tm()
        let parsed = text.withCString { start -> Bool in
            guard let end = CSDFetch_strptime(start, "%a, %d %b %Y %H:%M:%S GMT", &fields) else { return false }
            return end.pointee == 0
        }
        guard parsed else { return nil }
        let seconds = timegm(&fields)
        return seconds == -1 ? nil : Date(timeIntervalSince1970: Double(seconds))
    }
}
