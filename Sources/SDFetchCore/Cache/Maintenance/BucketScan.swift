/// What a bucket folder holds: files by kind, and names that are not regular files (links,
/// FIFOs, devices, folders) which nothing reads and `clean` removes.
struct BucketScan: Sendable {
    /// Files named by a 32-hex-digit digest: entry files (or, in `failed/`, records).
    var files: [ScannedFile] = []
    /// Temporary files (``FileIO/temporarySuffix``) left by writers, live or crashed.
    var temporaries: [ScannedFile] = []
    /// Anything that is not a regular file.
    var strays: [String] = []
}
