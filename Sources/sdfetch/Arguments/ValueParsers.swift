import SDFetchCore

/// Typed option values: durations, sizes, bounded integers, enumerations, shards.
///
/// Each parser returns the value or a ``UsageError`` whose message names the option,
/// quotes the bad text and says what would have been accepted.
enum ValueParsers {
    /// The longest duration any option accepts: ten years. Bounded when parsed
    /// (SDFetchCore.docc, Security) so that no later arithmetic on it (`now - maxAge`,
    /// nanoseconds for curl) can overflow and trap: `--max-age 15251w` used to crash
    /// `clean`.
    static let longestDuration = Duration.seconds(10 * 365 * 86400)
    /// The largest size any option accepts: 1 PiB, far past any disk, far below `Int64.max`.
    static let largestSize: Int64 = 1 << 50

    /// `500ms 30s 10m 2h 7d 1w`; a plain number is seconds; decimals allowed (`1.5h`, `0.5`); at most `limit`.
    static func duration(
        _ text: String, option: String, atMost limit: Duration = longestDuration
    ) throws(UsageError) -> Duration {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        var number = Substring(text)
        var scale = 1.0
        if text.lowercased().hasSuffix("ms") {
            scale = 0.001
            number = number.dropLast(2)
        } else if let last = text.last, last.isASCII, let unit = units[Character(last.lowercased())] {
            scale = unit
            number = number.dropLast()
        }
        guard let value = Double(number), value.isFinite, value >= 0, number.first != "+",
            !number.contains(where: { $0 == "e" || $0 == "E" }), value * scale < 1e12
        else {
            throw UsageError(
                "option \(option): '\(Escaping.terminal(text))' is not a duration (a number with ms, s, m, h, d or w, e.g. 7d)"
            )
        }
        let total = value * scale
        guard total <= limit.timeInterval else {
            throw UsageError("option \(option): '\(Escaping.terminal(text))' is too long (at most \(describe(limit)))")
        }
        let whole = total.rounded(.down)
        return .seconds(Int64(whole)) + .nanoseconds(Int64(((total - whole) * 1e9).rounded()))
    }

    /// `512K 50M 2G 1T` (1024-based, case-insensitive, an optional trailing `B` or `iB`); a plain number is bytes.
    static func size(_ text: String, option: String) throws(UsageError) -> Int64 {
        let failure = UsageError(
            "option \(option): '\(Escaping.terminal(text))' is not a size (bytes, or a number with K, M, G or T, e.g. 50M)"
        )
        var body = Substring(text.uppercased())
        if body.hasSuffix("IB") {
            body = body.dropLast(2)
        } else if body.hasSuffix("B"), body.count > 1,
            "KMGT".contains(body[body.index(before: body.index(before: body.endIndex))])
        {
            body = body.dropLast()
        }
        var shift: Int64 = 0
        if let last = body.last, let index = "KMGT".firstIndex(of: last) {
            shift = 10 * Int64("KMGT".distance(from: "KMGT".startIndex, to: index) + 1)
            body = body.dropLast()
        }
        guard !body.isEmpty, body.allSatisfy(\.isASCII), body.allSatisfy({ $0.isNumber || $0 == "." }),
            let value = Double(body), value.isFinite
        else { throw failure }
        let bytes = value * Double(Int64(1) << shift)
        guard bytes <= Double(largestSize) else {
            throw UsageError("option \(option): '\(Escaping.terminal(text))' is too large (at most 1024T)")
        }
        return Int64(bytes.rounded())
    }

    /// `10 years`, `1 day`, `3600 s`: a limit in words for messages.
    private static func describe(_ limit: Duration) -> String {
        let seconds = limit.components.seconds
        if seconds % (365 * 86400) == 0 { return "\(seconds / (365 * 86400)) years" }
        if seconds % 86400 == 0 { return "\(seconds / 86400)d" }
        return "\(seconds)s"
    }

    /// A whole number in `range`.
    static func integer(_ text: String, option: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            let upper = range.upperBound == Int.max ? "or more" : "to \(range.upperBound)"
            throw UsageError(
                "option \(option): '\(Escaping.terminal(text))' is not a number from \(range.lowerBound) \(upper)")
        }
        return value
    }

    /// One of `type`'s raw values, suggesting the closest on a typo.
    static func choice<T: RawRepresentable & CaseIterable>(
        _ text: String, option: String, of type: T.Type
    ) throws(UsageError) -> T
    where T.RawValue == String {
        if let value = T(rawValue: text) { return value }
        let names = T.allCases.map(\.rawValue)
        throw UsageError(
            "option \(option): '\(Escaping.terminal(text))' is not one of \(names.joined(separator: ", "))"
                + EditDistance.suggestion(for: text, among: names))
    }

    /// `--fail-on`: a comma-separated list of the statuses that are not a success
    /// (`failed,skipped,invalid`), or `none`.
    /// In ``FetchStatus/allCases`` order, so equal lists compare and print alike.
    static func failingStatuses(_ text: String, option: String) throws(UsageError) -> [FetchStatus] {
        if text == "none" { return [] }
        let names = FetchStatus.allCases.filter { !$0.isSuccess }.map(\.rawValue)
        var statuses: Set<FetchStatus> = []
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = String(word)
            guard let status = FetchStatus(rawValue: name), !status.isSuccess else {
                throw UsageError(
                    "option \(option): '\(Escaping.terminal(name))' is not one of \(names.joined(separator: ", ")) "
                        + "(or none)" + EditDistance.suggestion(for: name, among: names))
            }
            statuses.insert(status)
        }
        return FetchStatus.allCases.filter(statuses.contains)
    }

    /// `K/N` with 0 <= K < N.
    static func shard(_ text: String, option: String) throws(UsageError) -> Shard {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]),
            let shard = Shard(index: index, count: count)
        else {
            throw UsageError(
                "option \(option): '\(Escaping.terminal(text))' is not a shard K/N with 0 <= K < N (e.g. 0/3)")
        }
        return shard
    }

    /// Text sent in a header as is (`-A`): no control characters, so no header injection.
    static func headerValue(_ text: String, option: String) throws(UsageError) -> String {
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) else {
            throw UsageError("option \(option): '\(Escaping.terminal(text))' contains a control character")
        }
        return text
    }

    /// `Name: value`, as curl's `-H` wants it.
    static func header(_ text: String, option: String) throws(UsageError) -> String {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex,
            !text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F })
        else {
            throw UsageError("option \(option): '\(Escaping.terminal(text))' is not a header 'Name: value'")
        }
        return text
    }
}

extension ValueParsers {
    /// `RRGGBB` in hex, with or without a leading `#`: red, green, blue.
    static func color(_ text: String, option: String) throws(UsageError) -> [UInt8] {
        let digits = text.hasPrefix("#") ? text.dropFirst() : Substring(text)
        guard digits.count == 6, let value = UInt32(digits, radix: 16) else {
            throw UsageError(
                "option \(option): '\(Escaping.terminal(text))' is not a colour (RRGGBB in hex, e.g. ffffff)")
        }
        return [UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
