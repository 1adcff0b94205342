/// The one byte formatter, for failure details ("body exceeds 50.0 MiB"), the bar, the
/// summary and the cache commands: `512 B`, `12.3 KiB`, `4.0 MiB`.
///
/// 1024-based with IEC names, because every size option is read 1024-based (`--max-bytes
/// 50M` is 50 x 2^20 bytes): "MB" would name 10^6 and disagree with the option by 5 %.
/// Always one decimal above 1 KiB, so a live bar does not change width as values cross
/// whole units.
package enum ByteCountText {
    package static func render(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : DecimalText.fixed(value, places: 1) + " " + units[unit]
    }
}
