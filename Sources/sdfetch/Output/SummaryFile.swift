import FoundationEssentials
import Glibc
import SDFetchCore

/// `--summary FILE`: the run's totals as one JSON object (README, "For scripts": a
/// machine-readable summary that does not break consumers reading one URL object per line).
///
/// A file of its own rather than a marked last line of stdout, so `--json > report.jsonl`
/// stays a list of result objects and the reports of N shards still concatenate. `-` writes
/// it to standard error, for a CI log.
enum SummaryFile {
    /// `{"urls":…,"downloaded":…,…,"errors":{"http-404":2},"duplicates":…,"bytes":…,"requests":…,"seconds":…}`
    ///
    /// `not_reached`: input lines a run stopped by Ctrl-C never reached, null when the
    /// input's length is unknown (a pipe). With the cap: `max_cache_size`;
    /// `evicted_run_entries`, how many of the run's own entries the trim removed (0 when they
    /// fit); `run_cache_bytes`, their bytes, when they did not fit; and `warnings`, the
    /// sentences said on standard error.
    static func json(
        _ consumer: EventConsumer, elapsed: Duration, interrupted: Bool, maxCacheSize: Int64,
        overflow: CacheOverflow? = nil
    ) -> String {
        let summary = consumer.summary
        var object = JSONLine()
        object.add("urls", FetchStatus.allCases.reduce(0) { $0 + summary.count($1) } + summary.interrupted)
        for status in FetchStatus.allCases { object.add(status.rawValue, summary.count(status)) }
        object.add("interrupted", summary.interrupted)
        object.add(
            "errors", counts: Dictionary(summary.errorKinds.map { ($0.key.label, $0.value) }, uniquingKeysWith: +))
        object.add("duplicates", summary.duplicates)
        object.add("bytes", summary.downloadedBytes)
        object.add("received_bytes", summary.receivedBytes)
        object.add("requests", summary.requests)
        object.add("seconds", Double((elapsed.timeInterval * 1000).rounded()) / 1000)
        object.add("hosts_down", counts: consumer.hosts.downCounts)
        object.add("host_causes", counts: consumer.hosts.downCauses)
        object.add("unreadable_inputs", summary.unreadableInputs)
        object.add("was_interrupted", interrupted || summary.wasInterrupted)
        // Input lines an interrupted run never read: null when unknown (a pipe).
        object.add("not_reached", consumer.notReached)
        object.add("max_cache_size", maxCacheSize)
        object.add("evicted_run_entries", overflow?.removedEntries ?? 0)
        object.add("run_cache_bytes", overflow?.runBytes)
        if let remote = consumer.remote?.counts {
            object.add(
                "remote",
                counts: [
                    "hits": remote.hits, "misses": remote.misses, "uploads": remote.uploads,
                    "skipped_uploads": remote.skippedUploads, "errors": remote.errors,
                ])
        }
        object.add("warnings", strings: (overflow.map { [$0.sentence] } ?? []) + consumer.remoteWarnings)
        return object.text
    }

    /// Why the file opened as `fd` (at `path`) must not be replaced by a summary, or nil: it
    /// is an input of this run, or an existing file that is not one (it does not start as
    /// ``json(_:elapsed:interrupted:maxCacheSize:overflow:)``'s text does, after any white
    /// space). `sdfetch --summary urls.txt`, the list left without its option, would
    /// otherwise read standard input and replace the list with a summary of nothing. Only
    /// regular files are judged: a FIFO or a device is written as it is.
    static func refusal(of fd: Int32, path: String, inputs: [InputSource]) -> String? {
        var target = stat()
        guard fstat(fd, &target) == 0, target.st_mode & S_IFMT == S_IFREG else { return nil }
        for case .file(let input) in inputs {
            var other = stat()
            if stat(input, &other) == 0, other.st_dev == target.st_dev, other.st_ino == target.st_ino {
                return "it is also an input of this run; name another file"
            }
        }
        guard target.st_size > 0 else { return nil }
        // Read through a second descriptor (`fd` is write-only), judged only if it is the same file.
        let reader = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard reader >= 0 else { return "it cannot be read to check that it is an earlier summary" }
        defer { close(reader) }
        var read = stat()
        guard fstat(reader, &read) == 0, read.st_dev == target.st_dev, read.st_ino == target.st_ino else {
            return "it was replaced while it was opened"
        }
        var head = [UInt8](repeating: 0, count: 512)
        let count = head.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let text = head[..<count].drop(while: { " \t\r\n".utf8.contains($0) })
        guard !text.starts(with: summaryStart.prefix(text.count)) else { return nil }
        return "it exists and is not a summary (a list of URLs?); name another file, or remove it first"
    }

    /// The descriptor of this process's that `path` names (`/dev/stderr` when `2>> run.log`:
    /// 2; `/dev/fd/3`: 3), which is written as the shell set it up, never judged; nil for
    /// any other path.
    static func streamDescriptor(_ path: String) -> Int32? {
        if let index = streamNames.firstIndex(of: path) { return Int32(index) }
        guard let folder = streamFolders.first(where: path.hasPrefix) else { return nil }
        return Int32(path.dropFirst(folder.count)).flatMap { $0 >= 0 ? $0 : nil }
    }

    private static let summaryStart = Array(#"{"urls":"#.utf8)
    /// Standard input, output and error, in descriptor order.
    private static let streamNames = ["/dev/stdin", "/dev/stdout", "/dev/stderr"]
    private static let streamFolders = ["/dev/fd/", "/proc/self/fd/"]
}
