/// The `-o` directory or a file in it could not be written.
struct OutputError: Error {
    let detail: String
    /// The cached image was gone when it was opened (``CachedImage/Unreadable/isGone``).
    var isEntryGone = false
}
