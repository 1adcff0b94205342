import FoundationEssentials
import Glibc

/// Conversions between `Date`, the kernel's `timespec` and whole nanoseconds since 1970,
/// the unit of every time in the cache's records.
///
/// Every conversion saturates: a file's mtime comes from the cache directory, which is
/// untrusted (`tar` and `rsync` keep mtimes, and ext4 stores them up to 2446, past the
/// 2262 where nanoseconds since 1970 leave `Int64`), so no time read from disk can trap.
/// Times past ``IndexRecord/maxTime`` (or before 1970) are out of range: such files are
/// strays (``isInRange(_:)``), such record fields damaged.
enum FileTime {
    /// Whole seconds `Int64` nanoseconds can hold, either side of 1970.
    private static let maxSeconds = Int64.max / 1_000_000_000 - 1

    static func timespec(_ date: Date) -> Glibc.timespec {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else {
            return Glibc.timespec(tv_sec: seconds > 0 ? Int(maxSeconds) : -Int(maxSeconds), tv_nsec: 0)
        }
        let whole = min(max(seconds.rounded(.down), -Double(maxSeconds)), Double(maxSeconds))
        let fraction = min(max(seconds - whole, 0), 0.999_999_999)
        return Glibc.timespec(tv_sec: Int(whole), tv_nsec: Int((fraction * 1e9).rounded(.down)))
    }

    static func date(_ time: Glibc.timespec) -> Date {
        Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }

    /// Nanoseconds since 1970, saturated at the ends of `Int64`.
    static func nanoseconds(_ time: Glibc.timespec) -> Int64 {
        let (whole, overflow) = Int64(time.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return time.tv_sec < 0 ? Int64.min : Int64.max }
        let (sum, overflowAdding) = whole.addingReportingOverflow(Int64(time.tv_nsec))
        return overflowAdding ? (time.tv_nsec < 0 ? Int64.min : Int64.max) : sum
    }

    static func nanoseconds(_ date: Date) -> Int64 { nanoseconds(timespec(date)) }

    /// `seconds` (a stamp) in nanoseconds, saturated.
    static func nanoseconds(seconds: Int64) -> Int64 {
        nanoseconds(Glibc.timespec(tv_sec: Int(seconds), tv_nsec: 0))
    }

    static func date(nanoseconds: Int64) -> Date {
        let (seconds, remainder) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return date(Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(remainder)))
    }

    /// Whether a file time (ns since 1970) is one the cache could have written: from 1970
    /// to ``IndexRecord/maxTime``. A file dated outside is a stray, whatever its name.
    static func isInRange(_ nanoseconds: Int64) -> Bool {
        (0...IndexRecord.maxTime).contains(nanoseconds)
    }

    /// `date` as it reads back from a record: what was written compares equal to what is read.
    static func normalized(_ date: Date) -> Date { Self.date(nanoseconds: nanoseconds(date)) }

    /// `UTIME_OMIT` (`(1l << 30) - 2l`; Glibc's Swift module does not export it).
    static let omitted = Glibc.timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)
}
