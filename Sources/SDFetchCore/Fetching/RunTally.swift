import AsyncAlgorithms

/// The second stage of a ``FetchRun``: each result's last step (unless the intake ran it,
/// as for warm hits), then the one count of its status, then the hand-off to the consumer.
///
/// Owns the status counts of a run: the bar's counters (``RunProgress/completed(_:)``) and
/// the summary's (``RunSummary/counts``, ``RunSummary/interrupted``, bytes, error kinds,
/// requests) are both taken here, after ``ResultDelivery`` decided the status for good, so
/// no consumer re-counts and no status changes after it was counted. A task of its own, so
/// the `-o` copies of downloads overlap the reading loop's lookups.
struct RunTally {
    let progress: RunProgress
    private var counts = RunSummary()

    /// Settles every result arriving on `input` and forwards every event, in order, to
    /// `output`; the final summary gets this stage's counts. Finishes `output` at the end.
    static func forward(
        _ input: AsyncChannel<FetchEvent>, to output: AsyncChannel<FetchEvent>, progress: RunProgress,
        delivery: (any ResultDelivery)?
    ) async {
        var tally = RunTally(progress: progress)
        for await event in input {
            switch event {
            case .results(var results):
                if let delivery { results = await deliver(results, through: delivery) }
                for result in results { tally.count(result) }
                await output.send(.results(results))
            case .finished(var summary):
                tally.complete(&summary)
                await output.send(.finished(summary))
            case .unreadableInput, .inputFinished:
                await output.send(event)
            }
        }
        output.finish()
    }

    /// Each result's last step: independent per result, so a batch is split over the cores.
    private static func deliver(_ results: [FetchResult], through delivery: any ResultDelivery) async -> [FetchResult] {
        // Warm hits arrive delivered (``RunIntake``): a batch of them is passed on as it is.
        guard results.contains(where: { !$0.isDelivered }) else { return results }
        return await BatchSplit.map(results) { result in
            guard !result.isDelivered else { return result }
            var result = result
            delivery.deliver(&result)
            return result
        }
    }

    /// A result's count, once its last step decided its status for good.
    mutating func count(_ result: FetchResult) {
        if let kind = result.failure?.kind, result.status == .failed { counts.errorKinds[kind, default: 0] += 1 }
        if result.httpStatus != nil { counts.requests += 1 }
        if result.failure?.kind == .interrupted {
            counts.wasInterrupted = true
            counts.interrupted += 1
        } else {
            counts.counts[result.status, default: 0] += 1
        }
        if result.status == .downloaded { counts.downloadedBytes += result.bytes }
        progress.completed(result)
    }

    /// The intake's summary (inputs, duplicates, keys) with this stage's counts.
    func complete(_ summary: inout RunSummary) {
        summary.counts = counts.counts
        summary.interrupted = counts.interrupted
        summary.wasInterrupted = summary.wasInterrupted || counts.wasInterrupted
        summary.downloadedBytes = counts.downloadedBytes
        summary.errorKinds = counts.errorKinds
        summary.requests = counts.requests
    }
}
