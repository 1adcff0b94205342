import SDFetchCore

/// Option values written as a user would type them, for `--help`'s "(default ...)": the
/// inverse of ``ValueParsers`` for whole values, so each default printed parses back to
/// the value ``FetchOptions`` holds.
enum ValueText {
    /// Whole seconds, no unit (`--timeout SEC`): `15`.
    static func seconds(_ duration: Duration) -> String {
        "\(duration.components.seconds)"
    }

    /// The largest unit of `d h m s` that divides exactly: `7d`, `90m`, `0`. (Not `w`:
    /// `--help` and the README write the week as `7d`.)
    static func duration(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        guard seconds > 0 else { return "0" }
        for (unit, size) in [("d", Int64(86400)), ("h", 3600), ("m", 60)] where seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }

    /// The largest 1024-based unit that divides exactly: `1G`, `50M`, `512`.
    static func size(_ bytes: Int64) -> String {
        for (unit, shift) in [("T", Int64(40)), ("G", 30), ("M", 20), ("K", 10)]
        where bytes >= Int64(1) << shift && bytes % (Int64(1) << shift) == 0 {
            return "\(bytes >> shift)\(unit)"
        }
        return "\(bytes)"
    }

    /// `ffffff`: red, green, blue in hex, as ``ValueParsers/color(_:option:)`` reads it.
    static func color(_ rgb: [UInt8]) -> String {
        rgb.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
