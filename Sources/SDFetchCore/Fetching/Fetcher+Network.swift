extension Fetcher {
    /// The network step of one URL: the request, tried again per `--retries` with the
    /// ``RetryPolicy``'s backoff while the failure is transient, and cut short when the
    /// host is down (`--host-failures`) or the run is interrupted.
    ///
    /// It only waits, on the engine or on a backoff sleep. Each try counts against `-j`
    /// only while its transfer runs; backoff sleeps hold no transfer slot. The
    /// outcome is the last try's; a `304` to a conditional request is its own outcome, never
    /// a failure (nor retried).
    func download(
        _ request: TransferRequest, key: URLKey, spelling: String, isConditional: Bool
    ) async -> NetworkOutcome {
        let policy = options.retryPolicy
        var attempt = 1
        var ownFailure: (TransferResponse, FetchFailure)?
        while true {
            let response = await engine.perform(request, hostFailureLimit: options.hostFailures)
            // The host went down while this URL waited to retry: it keeps the failure it met.
            if let ownFailure, response.failure?.kind == .hostDown { return .failed(ownFailure.0, ownFailure.1) }
            if response.redirectCount > 0 {
                let target = response.finalURL.map { " to \($0)" } ?? ""
                note(
                    spelling,
                    "followed \(response.redirectCount) redirect\(response.redirectCount == 1 ? "" : "s")\(target)")
            }
            if isConditional && response.httpStatus == 304 {
                note(spelling, "304 not modified: entry renewed")
                return .notModified(response)
            }
            guard let failure = response.failure else { return .body(response) }
            let host = key.origin
            if failure.kind == .dns, engine.hostHealth.claimNameCheck(host, limit: options.hostFailures),
                await engine.interruption.unlessTripped({ await NameCheck.verdict(hostAndPort: key.hostAndPort) })
                    == .doesNotExist
            {
                engine.hostHealth.recordMissingName(host, failure: failure, limit: options.hostFailures)
            }
            guard policy.shouldRetry(failure, afterAttempt: attempt, retries: options.retries) else {
                return .failed(response, failure)
            }
            // A host that went down meanwhile ends the URL now instead of after a pointless
            // sleep; the URL met its own failure, so it keeps its kind (`dns`, `timeout`...).
            if engine.hostHealth.isDown(host, limit: options.hostFailures) {
                return .failed(response, failure)
            }
            let delay = policy.delay(beforeRetry: attempt, retryAfter: response.retryAfter)
            note(
                spelling,
                "\(failure.kind.label) (\(failure.detail)); retry \(attempt) of \(options.retries) after waiting \(delay.secondsText) s"
            )
            ownFailure = (response, failure)
            retrying.add(1, ordering: .relaxed)
            let slept = await engine.interruption.sleep(for: delay)
            retrying.subtract(1, ordering: .relaxed)
            guard slept else {
                let failure = FetchFailure(.interrupted, "interrupted while waiting to retry")
                return .failed(TransferResponse(failure: failure), failure)
            }
            attempt += 1
        }
    }
}

extension Fetcher {
    /// Hands a `-v` note to the CLI's sink, if any; the text is raw (the printer escapes it).
    func note(_ spelling: String, _ message: @autoclosure () -> String) {
        guard let notes else { return }
        notes(FetchNote(url: spelling, message: message()))
    }

    /// `If-None-Match` from `If-None-Match: "abc"`.
    static func headerName(_ line: String) -> String {
        String(line.prefix { $0 != ":" })
    }
}

extension Duration {
    /// Seconds with at most three decimals, for messages: `0.5`, `2`, `1.234`.
    var secondsText: String {
        let milliseconds = (Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15).rounded()
        let seconds = milliseconds / 1000
        return seconds == seconds.rounded() ? String(Int64(seconds)) : String(seconds)
    }
}
