import SDFetchCore

/// A run whose own entries do not fit under `--max-cache-size`: the end-of-run trim had to
/// remove some of them, so the next run over the same list downloads them again, and the
/// one after that, without the cache ever warming. Said once, on standard error and in
/// `--summary`, with the numbers and the option that fixes it.
struct CacheOverflow: Equatable {
    let maxBytes: Int64
    /// The run's entries and their bytes, as the trim counted them.
    let runEntries: Int
    let runBytes: Int64
    /// How many of them the trim removed.
    let removedEntries: Int

    /// Nil when the trim kept every entry of the run.
    init?(_ report: CleanReport, maxBytes: Int64) {
        guard report.removedProtectedEntries > 0 else { return nil }
        self.maxBytes = maxBytes
        runEntries = report.protectedEntries
        runBytes = report.protectedBytes
        removedEntries = report.removedProtectedEntries
    }

    /// The sentence, without the `sdfetch: ` prefix or a line end.
    var sentence: String {
        "this run's \(runEntries) cache entries take \(HumanReadable.bytes(runBytes)), more than --max-cache-size "
            + "\(HumanReadable.bytes(maxBytes)): \(removedEntries) of them were removed, so the next run "
            + "downloads them again; raise --max-cache-size to at least \(Self.sizeAtLeast(runBytes))"
    }

    /// `bytes` as a `--max-cache-size` value no smaller than it, rounded up to a tenth of its
    /// largest 1024-based unit: `1.4G`, `300M`, `12K`.
    static func sizeAtLeast(_ bytes: Int64) -> String {
        for (unit, shift) in [("T", Int64(40)), ("G", 30), ("M", 20), ("K", 10)] where bytes >= Int64(1) << shift {
            let tenths = (bytes * 10 + (Int64(1) << shift) - 1) >> shift
            return tenths % 10 == 0 ? "\(tenths / 10)\(unit)" : "\(tenths / 10).\(tenths % 10)\(unit)"
        }
        return "\(bytes)"
    }
}
