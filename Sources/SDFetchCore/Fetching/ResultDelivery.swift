/// The last step of a result before it is counted: puts the image where the user asked
/// (the CLI's `-o`). It alone may still change a status (`downloaded` to `failed` when the
/// copy cannot be written), which is why the count waits for it (see ``RunTally``).
///
/// Runs on several results of a batch at once (one slice per core, ``BatchSplit``): for a
/// warm hit right after its lookup in ``RunIntake``, for the rest in ``RunTally``. Calls for
/// different results must not depend on each other's order.
public protocol ResultDelivery: Sendable {
    /// Places what `result` names; sets `result.path` to the delivered file, or turns the
    /// result `failed` with the reason.
    func deliver(_ result: inout FetchResult)
}
