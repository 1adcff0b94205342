import Foundation

/// Fetches URLs through the cache, the network and verification, one transfer per key.
///
/// Concurrent calls for one key share the first call's work (SDWebImage's URL-keyed
/// operations): the task is registered before its first suspension and removed when it
/// finishes, so a later call starts afresh and finds the cache. The actor only
/// bookkeeps; waiting and CPU work happen in nonisolated code.
public actor Fetcher {
    public nonisolated let options: FetchOptions
    public nonisolated let cache: DiskCache
    nonisolated let engine: CurlEngine
    nonisolated let now: @Sendable () -> Date
    nonisolated let blacklist: FailureBlacklist
    /// Receives `-v`'s notes (retries, redirects, revalidations, backoff waits); nil: none made.
    nonisolated let notes: (@Sendable (FetchNote) -> Void)?
    private var inFlight: [URLKey: Task<FetchResult, Never>] = [:]

    public init(
        options: FetchOptions, cache: DiskCache, now: @escaping @Sendable () -> Date = Date.init,
        notes: (@Sendable (FetchNote) -> Void)? = nil
    ) {
        self.options = options
        self.notes = notes
        self.cache = cache
        self.now = now
        self.blacklist = FailureBlacklist(cache: cache)
        self.engine = CurlEngine(maxTransfers: options.concurrency, pacing: options.pacing)
    }

    /// The result for `key`; `spelling` is the input text reported as `url`.
    public func fetch(_ key: URLKey, spelling: String) async -> FetchResult {
        if let running = inFlight[key] { return await running.value }
        let task = Task { await self.perform(key, spelling: spelling) }
        inFlight[key] = task
        let result = await task.value
        inFlight[key] = nil
        return result
    }

    /// Interrupts every transfer (Ctrl-C) and every verification under way (its task is
    /// cancelled, which the walkers and decoders check); their results come back `failed`
    /// with `interrupted`.
    public nonisolated func cancelAll() {
        engine.cancelAll()
        Task { await self.cancelInFlight() }
    }

    private func cancelInFlight() {
        for task in inFlight.values { task.cancel() }
    }

    /// Stops the transfer thread once no transfer is left and returns when it has ended;
    /// ``withFetcher(options:cache:now:notes:isolation:_:)`` calls it on every exit.
    public nonisolated func shutdown() async { await engine.shutdown() }

    // MARK: - One URL

    private nonisolated func perform(_ key: URLKey, spelling: String) async -> FetchResult {
        let clock = ContinuousClock()
        let start = clock.now
        var result = await resolve(key, spelling: spelling)
        result.duration = clock.now - start
        return result
    }

    /// Cache, blacklist, then network, in the spec's order:
    /// a servable entry answers at once (``cachedHit(_:spelling:)``); `--offline` stops a
    /// miss there; an active blacklist record gives `skipped` without a request (unless
    /// `--retry-failed`); a stale or `--refresh`ed entry with validators is asked for
    /// conditionally, and a `304` renews it (`revalidated`).
    private nonisolated func resolve(_ key: URLKey, spelling: String) async -> FetchResult {
        let entry = cache.entry(for: key)
        if let entry, let hit = serve(entry, key: key, spelling: spelling) { return hit }
        if options.offline {
            return failedResult(
                key, spelling: spelling, FetchFailure(.offlineMiss, "not in the cache"), httpStatus: nil)
        }
        var hadRecord = options.retryFailed
        if !options.retryFailed, let record = blacklist.record(for: key) {
            if record.isActive(now: now(), maxAge: options.maxAge) {
                return FetchResult(url: spelling, key: key, status: .skipped, failure: record.failure)
            }
            hadRecord = true
        }
        let result = await request(key, spelling: spelling, revalidating: entry)
        if let failure = result.failure {
            blacklist.insert(failure, for: key)  // permanent kinds only
        } else if hadRecord {
            blacklist.remove([key])
        }
        return result
    }

    /// One request for `key`, conditional when `entry` has validators, and its result:
    /// `revalidated` on a `304`, `downloaded` on a verified `2xx`, else `failed`.
    private nonisolated func request(
        _ key: URLKey, spelling: String, revalidating entry: CacheEntry?
    ) async -> FetchResult {
        let validators = entry.map(Self.conditionalHeaders) ?? []
        // This request's options: the run's, plus the entry's validators.
        var options = self.options
        options.headers += validators
        var request = TransferRequest(
            url: key.string, headers: options.headers, userAgent: options.userAgent, timeout: options.timeout,
            maxBytes: options.maxBytes, maxRedirects: options.maxRedirects)
        request.maxTime = options.maxTime
        request.connection = options.connection
        if !validators.isEmpty { note(spelling, "revalidating (\(validators.map(Self.headerName).joined(separator: ", ")))") }
        let response = await download(request, key: key, spelling: spelling)
        if let failure = response.failure {
            if let entry, !validators.isEmpty, response.httpStatus == 304 {
                return revalidated(entry, response: response, key: key, spelling: spelling)
            }
            return failedResult(key, spelling: spelling, failure, httpStatus: response.httpStatus)
        }
        return await store(response, key: key, spelling: spelling)
    }

    /// The result for `key` when the cache answers without any request, else nil.
    ///
    /// Synchronous and nonisolated so ``FetchRun`` can serve warm hits inline, without a
    /// task or an actor hop: one read of the entry's record and one timestamp update.
    public nonisolated func cachedHit(_ key: URLKey, spelling: String) -> FetchResult? {
        cache.hit(key) { isServable(storedAt: $0.storedAt) }.map {
            cachedResult($0, key: key, spelling: spelling, status: .cached)
        }
    }

    /// Whether an entry stored at `storedAt` may be served without a request: fresh, or
    /// any entry `--offline`.
    private nonisolated func isServable(storedAt: Date) -> Bool {
        options.offline
            || (!options.refresh && Freshness(maxAge: options.maxAge).isFresh(storedAt, now: now()))
    }

    /// `cached` when `entry` may be served as is; records the use.
    private nonisolated func serve(_ entry: CacheEntry, key: URLKey, spelling: String) -> FetchResult? {
        guard isServable(storedAt: entry.storedAt) else { return nil }
        cache.touch(key)
        return cachedResult(entry, key: key, spelling: spelling, status: .cached)
    }

    /// `If-None-Match` / `If-Modified-Since` from the entry's validators (none without them).
    static func conditionalHeaders(_ entry: CacheEntry) -> [String] {
        var headers: [String] = []
        if let etag = entry.etag { headers.append("If-None-Match: \(etag)") }
        if let lastModified = entry.lastModified { headers.append("If-Modified-Since: \(lastModified)") }
        return headers
    }

    /// A `304` confirmed `entry`: renew its times (and validators) without a body.
    private nonisolated func revalidated(
        _ entry: CacheEntry, response: TransferResponse, key: URLKey, spelling: String
    ) -> FetchResult {
        do throws(FetchFailure) {
            // nil: another process stored a newer body meanwhile; serve that one.
            let current =
                try cache.renew(entry, for: key, etag: response.etag, lastModified: response.lastModified)
                ?? cache.entry(for: key) ?? entry
            var result = cachedResult(current, key: key, spelling: spelling, status: .revalidated)
            result.httpStatus = 304
            return result
        } catch {
            return failedResult(key, spelling: spelling, error, httpStatus: 304)
        }
    }

    /// Verifies a `2xx` body and stores it as the key's entry (replacing any older one).
    private nonisolated func store(_ response: TransferResponse, key: URLKey, spelling: String) async -> FetchResult {
        let verifier = ImageVerifier(mode: options.verify, maxPixels: options.maxPixels)
        let image: VerifiedImage
        switch verifier.verify(response.body) {
        case .success(let verified): image = verified
        case .failure(let failure):
            return failedResult(key, spelling: spelling, failure, httpStatus: response.httpStatus)
        }
        do throws(FetchFailure) {
            let entry = try cache.store(
                response.body, for: key, image: image, etag: response.etag, lastModified: response.lastModified)
            var result = cachedResult(entry, key: key, spelling: spelling, status: .downloaded)
            result.httpStatus = response.httpStatus
            return result
        } catch {
            return failedResult(key, spelling: spelling, error, httpStatus: response.httpStatus)
        }
    }

    private nonisolated func cachedResult(
        _ entry: CacheEntry, key: URLKey, spelling: String, status: FetchStatus
    ) -> FetchResult {
        var result = FetchResult(
            url: spelling, key: key, status: status, path: cache.bodyPath(for: key), format: entry.format,
            bytes: entry.bytes, width: entry.width, height: entry.height, sha256: entry.sha256)
        result.fileStamp = entry.stamp
        return result
    }

    private nonisolated func failedResult(
        _ key: URLKey, spelling: String, _ failure: FetchFailure, httpStatus: Int?
    ) -> FetchResult {
        FetchResult(
            url: spelling, key: key, status: .failed, httpStatus: httpStatus == 0 ? nil : httpStatus, failure: failure)
    }
}
