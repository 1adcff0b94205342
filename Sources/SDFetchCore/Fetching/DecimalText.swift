/// A number with a fixed count of decimals (`4.2`, `1.234`), as `%.Nf` prints it, for the
/// summary, the bar and JSON.
///
/// Here rather than `String(format:)`, which belongs to the full Foundation and would link
/// all of it (with ICU's data) into the static binary for a few numbers.
package enum DecimalText {
    /// `value` rounded to `places` decimals (ties to even, like printf on an exact tie).
    package static func fixed(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : value < 0 ? "-inf" : "inf" }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = (value.magnitude * Double(scale)).rounded(.toNearestOrEven)
        // Past Int64 the decimals carry nothing a person reads.
        guard scaled < 9e18 else { return String(value) }
        let units = Int64(scaled)
        var text = (value < 0 && units != 0 ? "-" : "") + String(units / scale)
        if places > 0 {
            let fraction = String(units % scale)
            text += "." + String(repeating: "0", count: places - fraction.count) + fraction
        }
        return text
    }

    /// `n` with at least two digits (`07`), as `%02ld` prints it.
    package static func twoDigits(_ n: Int) -> String {
        (0..<10).contains(n) ? "0\(n)" : String(n)
    }
}
