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
    private var inFlight: [URLKey: Task<FetchResult, Never>] = [:]

    public init(options: FetchOptions, cache: DiskCache, now: @escaping @Sendable () -> Date = Date.init) {
        self.options = options
        self.cache = cache
        self.now = now
        self.engine = CurlEngine(maxTransfers: options.concurrency)
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

    /// Interrupts every transfer (Ctrl-C); their results come back `failed` with `interrupted`.
    public nonisolated func cancelAll() { engine.cancelAll() }

    /// Stops the transfer thread; call once no fetch is pending.
    public nonisolated func shutdown() { engine.shutdown() }

    // MARK: - One URL

    private nonisolated func perform(_ key: URLKey, spelling: String) async -> FetchResult {
        let clock = ContinuousClock()
        let start = clock.now
        var result = await resolve(key, spelling: spelling)
        result.duration = clock.now - start
        return result
    }

    private nonisolated func resolve(_ key: URLKey, spelling: String) async -> FetchResult {
        let entry = cache.entry(for: key)
        if let entry, options.offline || (!options.refresh && entry.isFresh(now: now(), maxAge: options.maxAge)) {
            return cachedResult(entry, key: key, spelling: spelling, status: .cached)
        }
        if options.offline {
            return failedResult(key, spelling: spelling, FetchFailure(.offlineMiss, "not in the cache"), httpStatus: nil)
        }
        let request = TransferRequest(
            url: key.string, headers: options.headers, userAgent: options.userAgent, timeout: options.timeout,
            maxBytes: options.maxBytes, maxRedirects: options.maxRedirects)
        let response = await download(request, key: key)
        if let failure = response.failure {
            return failedResult(key, spelling: spelling, failure, httpStatus: response.httpStatus)
        }
        return await store(response, key: key, spelling: spelling)
    }

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

    private nonisolated func cachedResult(_ entry: CacheEntry, key: URLKey, spelling: String, status: FetchStatus) -> FetchResult {
        FetchResult(
            url: spelling, key: key, status: status, path: cache.bodyPath(for: key), format: entry.format,
            bytes: entry.bytes, width: entry.width, height: entry.height)
    }

    private nonisolated func failedResult(_ key: URLKey, spelling: String, _ failure: FetchFailure, httpStatus: Int?) -> FetchResult {
        FetchResult(
            url: spelling, key: key, status: .failed, httpStatus: httpStatus == 0 ? nil : httpStatus, failure: failure)
    }
}
