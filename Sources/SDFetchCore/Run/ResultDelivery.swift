/// The last step of a result before it is counted: puts the image where the user asked
/// (the CLI's `-o`). It alone may still change a status (`downloaded` to `failed` when the
/// copy cannot be written), which is why a result is published, and counted, only after it
/// (see ``RunLedger``).
///
/// The seam between a run and where its images go: placement (naming, `--link`, the
/// output folder) is the caller's, so the library fetches into its cache and a caller that
/// wants files elsewhere supplies this step; it reads an image only through
/// ``DiskCache/openImage(for:)``, never by a path into the cache.
///
/// Runs where ``RunIntake`` makes the result, on many results at once: a warm hit's right
/// after its lookup (one slice per core, ``BatchSplit``), a fetched one's in its child
/// task. Calls for different results must not depend on each other's order. A step that
/// is long CPU work or may wait (a resize, which waits for its pixel budget) suspends while
/// a thread of its own does it: the cooperative pool's few threads carry the transfers'
/// results and the progress bar meanwhile.
public protocol ResultDelivery: Sendable {
    /// Places what `result` names; sets `result.path` to the delivered file, or turns the
    /// result `failed` with the reason.
    func deliver(_ result: inout FetchResult) async
}
