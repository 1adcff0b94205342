/// The process exit statuses of the spec, in one place.
enum ExitStatus: Int32 {
    /// Every URL ended downloaded, cached or revalidated.
    case success = 0
    /// Some URL ended failed, skipped or invalid.
    case someFailed = 1
    case usage = 2
    /// The cache directory is unusable or an input file cannot be read.
    case unusableCacheOrInput = 3
    case interrupted = 130
}
