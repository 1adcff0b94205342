import AsyncAlgorithms

/// The second stage of a ``FetchRun``: the one count of each result's status, then the
/// hand-off to the consumer.
///
/// Owns the status counts of a run: the bar's counters (``RunProgress/completed(_:)``) and
/// the summary's (``RunSummary/counts``, ``RunSummary/interrupted``, bytes, error kinds,
/// requests) are both taken here, after ``ResultDelivery`` decided the status for good (in
/// ``RunIntake``), so no consumer re-counts and no status changes after it was counted.
struct RunTally {
    let progress: RunProgress
    private var counts = RunSummary()

    /// Counts every result arriving on `input` and forwards every event, in order, to
    /// `output`; the final summary gets this stage's counts. Finishes `output` at the end.
    static func forward(_ input: AsyncChannel<FetchEvent>, to output: AsyncChannel<FetchEvent>, progress: RunProgress)
        async
    {
        var tally = RunTally(progress: progress)
        for await event in input {
            switch event {
            case .results(let results):
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

    /// A result's count, once its last step decided its status for good.
    mutating func count(_ result: FetchResult) {
        if let kind = result.failure?.kind, result.status == .failed { counts.errorKinds[kind, default: 0] += 1 }
        // A `skipped` result repeats its record's status without a request.
        if result.httpStatus != nil, result.status != .skipped { counts.requests += 1 }
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
