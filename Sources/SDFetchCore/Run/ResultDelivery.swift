/// The last step of a result before it is counted: puts the image where the user asked
/// (the CLI's `-o`). It alone may still change a status (`downloaded` to `failed` when the
/// copy cannot be written), which is why a result is published, and counted, only after it
/// (see ``RunLedger``).
///
/// Runs where ``RunIntake`` makes the result, on many results at once: a warm hit's right
/// after its lookup (one slice per core, ``BatchSplit``), a fetched one's in its child
/// task. Calls for different results must not depend on each other's order.
public protocol ResultDelivery: Sendable {
    /// Places what `result` names; sets `result.path` to the delivered file, or turns the
    /// result `failed` with the reason.
    func deliver(_ result: inout FetchResult)
}
