import SDFetchCore

/// Human-readable sizes, rates and times for the bar and the summary.
enum HumanReadable {
    /// `512 B`, `12.3 KiB`, `4.0 MiB`: the one byte formatter (``ByteCountText``).
    static func bytes(_ count: Int64) -> String { ByteCountText.render(count) }

    /// `0:07`, `12:34`, `1:02:03`.
    /// A time that is not a number (an ETA from no rate yet) reads `0:00`, not a trap in `Int(_:)`.
    static func clock(seconds: Double) -> String {
        guard seconds.isFinite else { return clock(seconds: seconds == .infinity ? 359_999 : 0) }
        let total = Int(min(max(seconds, 0), 359_999).rounded(.up))
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        let tail = DecimalText.twoDigits(secs)
        return hours > 0 ? "\(hours):" + DecimalText.twoDigits(minutes) + ":" + tail : "\(minutes):" + tail
    }
}
