import FoundationEssentials
import Glibc

/// Conversions between `Date`, the kernel's `timespec` and whole nanoseconds since 1970,
/// the unit of every time in the cache's records.
enum FileTime {
    static func timespec(_ date: Date) -> Glibc.timespec {
        let seconds = date.timeIntervalSince1970
        let whole = seconds.rounded(.down)
        return Glibc.timespec(tv_sec: Int(whole), tv_nsec: Int(((seconds - whole) * 1e9).rounded(.down)))
    }

    static func date(_ time: Glibc.timespec) -> Date {
        Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }

    static func nanoseconds(_ time: Glibc.timespec) -> Int64 {
        Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    static func nanoseconds(_ date: Date) -> Int64 { nanoseconds(timespec(date)) }

    static func date(nanoseconds: Int64) -> Date {
        let (seconds, remainder) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return date(Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(remainder)))
    }

    /// `date` as it reads back from a record: what was written compares equal to what is read.
    static func normalized(_ date: Date) -> Date { Self.date(nanoseconds: nanoseconds(date)) }

    /// `UTIME_OMIT` (`(1l << 30) - 2l`; Glibc's Swift module does not export it).
    static let omitted = Glibc.timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)
}
