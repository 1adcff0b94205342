extension Fetcher {
    /// The network step of one URL: the request, tried again per `--retries` with the
    /// ``RetryPolicy``'s backoff while the failure is transient, and cut short when the
    /// host is down (`--host-failures`) or the run is interrupted.
    ///
    /// Nonisolated: it only waits, on the engine or on a backoff sleep, and touches no
    /// actor state, so coalesced callers never queue behind it. Each try counts against
    /// `-j` only while its transfer runs; backoff sleeps hold no transfer slot. The
    /// response returned is the last try's.
    nonisolated func download(_ request: TransferRequest, key: URLKey) async -> TransferResponse {
        let policy = options.retryPolicy
        var attempt = 1
        while true {
            let response = await engine.perform(request, hostFailureLimit: options.hostFailures)
            guard let failure = response.failure,
                policy.shouldRetry(failure, afterAttempt: attempt, retries: options.retries)
            else { return response }
            // A host that went down meanwhile fails now instead of after a pointless sleep.
            let host = HostHealth.host(of: key.string)
            if engine.hostHealth.isDown(host, limit: options.hostFailures) {
                return TransferResponse(failure: HostHealth.failure(for: host))
            }
            let delay = policy.delay(beforeRetry: attempt, retryAfter: response.retryAfter)
            guard await engine.interruption.sleep(for: delay) else {
                return TransferResponse(failure: FetchFailure(.interrupted, "interrupted while waiting to retry"))
            }
            attempt += 1
        }
    }
}
