/// The last step of a result before it is counted: puts the image where the user asked
/// (the CLI's `-o`). It alone may still change a status (`downloaded` to `failed` when the
/// copy cannot be written), which is why the count waits for it (see ``RunTally``).
///
/// Blocking file work (a reflink or `copy_file_range`, a rename): the tally runs it on a
/// ``BlockingPool`` thread, a whole batch of results per hop, in completion order.
public protocol ResultDelivery: Sendable {
    /// Places what `result` names; sets `result.path` to the delivered file, or turns the
    /// result `failed` with the reason.
    func deliver(_ result: inout FetchResult)
}

extension ResultDelivery {
    /// Delivers every result of `batch` on one of `pool`'s threads: one hop for the batch,
    /// so a warm run's 256-result batches pay one wake-up, not 256.
    func deliver(_ batch: [FetchResult], on pool: BlockingPool) async -> [FetchResult] {
        await pool.run {
            var batch = batch
            for index in batch.indices { deliver(&batch[index]) }
            return batch
        }
    }
}
