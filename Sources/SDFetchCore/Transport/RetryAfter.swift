import Foundation

/// Parses the `Retry-After` header (RFC 9110 §10.2.3): delay seconds or an HTTP date.
enum RetryAfter {
    static func seconds(from value: String, now: Date = Date()) -> Double? {
        if let delta = Double(value), delta >= 0 { return delta }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
