import SDFetchCore

/// How far a run is and how long it has left, from one ``RunProgress/Snapshot`` and the
/// recent rates: the numbers the bar shows, apart from their layout.
///
/// The run's work is weighed by bytes where sizes are known and by URLs where they are not.
/// The bytes still to come are the declared rest of the bodies under way, plus, for each
/// URL not yet answered (queued ones included), the mean body of this run times the share of
/// looked-up URLs that went to the network (a warm run's queue weighs nothing). The fill
/// and the ETA blend what the bytes and the URLs say by that share; once only unanswered
/// transfers are left and nothing has finished for a while (a dead host's connects), the
/// ETA is at least the time to the last of their timeouts.
struct ProgressEstimate: Equatable {
    /// 0...1.
    var fraction: Double
    /// The run's bytes in all, when anything is known of the sizes; `isExact` when every
    /// size still to come was declared.
    var totalBytes: Int64?
    var isExact = false
    /// Seconds left; nil while no rate says anything.
    var secondsLeft: Double?
    /// The part of ``secondsLeft`` that is no guess: the time to the last timeout of the
    /// connects the run's end waits for. Nil when nothing holds the end that way.
    var certainSeconds: Double?

    /// A URL counts as finished "a while" ago past this: longer than a loopback or LAN
    /// answer takes, far shorter than a connect timeout.
    static let stallAfter = Duration.seconds(1)

    init(
        _ snapshot: RunProgress.Snapshot, urlRate: Double, byteRate: Double, sinceLastDone: Duration
    ) {
        let urlFraction = snapshot.total > 0 ? min(1, Double(snapshot.done) / Double(snapshot.total)) : 0
        let remainingURLs = max(0, snapshot.total - snapshot.done)
        var remainingBytes: Double?
        var share = 1.0
        if snapshot.bodies > 0 {
            let meanBody = Double(snapshot.bodyBytes) / Double(snapshot.bodies)
            if snapshot.lookedUp > 0 { share = min(1, Double(snapshot.networkStarted) / Double(snapshot.lookedUp)) }
            // Not yet on the network (weighed by the share that goes there), and on it without
            // a body yet (queued for a lane, connecting, in a retry's backoff).
            let notStarted = Double(max(0, remainingURLs - snapshot.inFlight))
            let unsized = notStarted * share + Double(max(0, snapshot.inFlight - snapshot.bodiesUnderWay))
            remainingBytes = Double(snapshot.pendingBytes) + unsized * meanBody
            totalBytes = snapshot.bytes + Int64(remainingBytes!)
            isExact = snapshot.isTotalKnown && unsized == 0
        }
        if let remainingBytes, remainingBytes + Double(snapshot.bytes) > 0 {
            let byteFraction = Double(snapshot.bytes) / (Double(snapshot.bytes) + remainingBytes)
            fraction = share * byteFraction + (1 - share) * urlFraction
        } else {
            fraction = urlFraction
        }
        if remainingURLs == 0 && snapshot.isTotalKnown { fraction = 1 }

        // Each rate speaks for its share of the run: a warm run's URLs by the URL rate, a cold
        // run's bytes by the byte rate (an instant `invalid` line says nothing of a download).
        let byURLs = urlRate > 0 ? Double(remainingURLs) / urlRate : nil
        let bytesLeft = remainingBytes ?? Double(snapshot.pendingBytes)
        let byBytes = byteRate > 0 && bytesLeft > 0 ? bytesLeft / byteRate : nil
        var seconds: Double?
        switch (byURLs, byBytes) {
        case (let urls?, let bytes?):
            seconds = remainingBytes == nil ? max(urls, bytes) : share * bytes + (1 - share) * urls
        case (let urls?, nil): seconds = urls
        case (nil, let bytes?): seconds = bytes
        case (nil, nil): seconds = nil
        }
        if let wait = snapshot.longestWait, remainingURLs > 0, remainingURLs <= snapshot.inFlight,
            snapshot.awaitingResponses > 0, sinceLastDone >= Self.stallAfter
        {
            seconds = max(seconds ?? 0, wait.timeInterval)
            certainSeconds = wait.timeInterval
        }
        secondsLeft = seconds
    }
}
