import SDFetchCore

/// The process exit statuses (sdfetch(1) EXIT STATUS), and the only place errors and outcomes map onto them.
enum ExitStatus: Int32, Sendable {
    /// Every URL ended downloaded, cached or revalidated.
    case success = 0
    /// Some URL ended with a status `--fail-on` names (by default failed, skipped or
    /// invalid), or `path` found no entry for one.
    case someFailed = 1
    /// A bad command line.
    case usage = 2
    /// The cache directory is unusable, an input file cannot be read, or the results
    /// (standard output, `--summary FILE`, `-o DIR`) cannot be written.
    case unusableCacheOrInput = 3
    /// Ctrl-C or SIGTERM, after a clean shutdown.
    case interrupted = 130

    init(_ error: UsageError) { self = .usage }

    init(_ error: CacheError) { self = .unusableCacheOrInput }

    init(_ error: OutputError) { self = .unusableCacheOrInput }

    /// A fetch run's status, most severe first: interruption, an unusable input, a URL
    /// whose status is in `failOn` (`--fail-on`).
    init(run summary: RunSummary, interrupted: Bool, failOn: [FetchStatus] = [.failed, .skipped, .invalid]) {
        if interrupted || summary.wasInterrupted {
            self = .interrupted
        } else if summary.unreadableInputs > 0 {
            self = .unusableCacheOrInput
        } else if failOn.contains(where: { summary.count($0) > 0 }) {
            self = .someFailed
        } else {
            self = .success
        }
    }

    /// `path`: 1 when some URL had no entry.
    init(allFound: Bool) { self = allFound ? .success : .someFailed }
}
