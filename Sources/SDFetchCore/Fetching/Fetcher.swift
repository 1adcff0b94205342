import FoundationEssentials
import Synchronization

/// Fetches URLs through the cache, the network and verification: the steps of one URL's
/// way after it is identified (see <doc:Pipeline> for the whole run).
///
/// The steps run on the caller's task, so its cancellation reaches the transfer and the
/// verification: ``probe(_:spelling:pin:)`` (cache lookup, synchronous, the warm-run hit), then
/// ``fetch(_:spelling:after:pin:)`` (offline and blacklist decisions, network with retries,
/// `304` or verify and store). Immutable once made, so shared freely: what it shares with
/// other threads (the engine, the cache, the blacklist) keeps its own locks.
///
/// It does not coalesce: a ``FetchRun`` does, with its seen-set, the one coalescing point
/// of a run (<doc:Fetching#De-duplication>). Callers that fetch one key from many tasks at
/// once give the keys to a run instead.
public final class Fetcher: Sendable {
    public let options: FetchOptions
    public let cache: DiskCache
    let engine: CurlEngine
    /// Where the waits for a bucket lock held elsewhere happen (a replaced entry's store, a
    /// blacklist record's rename): never on the cooperative pool (``BlockingPool``).
    let files: BlockingPool
    let now: @Sendable () -> Date
    let blacklist: FailureBlacklist
    /// When an entry is served without a request, from the options.
    let servePolicy: ServePolicy
    /// Receives `-v`'s notes (retries, redirects, revalidations, backoff waits); nil: none made.
    let notes: (@Sendable (FetchNote) -> Void)?
    /// Body bytes of this fetcher's requests as they arrive (the progress bar's byte count).
    public let meter = TransferMeter()
    /// `--remote-cache`: the second tier a local miss asks before the origin; nil without one.
    public let remote: RemoteTier?
    /// URLs waiting out a backoff before their next try, for ``networkActivity``.
    let retrying = Atomic<Int>(0)
    /// Hosts announced to the engine ahead of their URLs' turn (``expectNetwork(_:distant:)``),
    /// each with whether it was announced as distant only.
    private let expectedHosts = Mutex<[String: Bool]>([:])

    public init(
        options: FetchOptions, cache: DiskCache, now: @escaping @Sendable () -> Date = Date.init,
        notes: (@Sendable (FetchNote) -> Void)? = nil
    ) {
        self.options = options
        self.notes = notes
        self.cache = cache
        self.now = now
        self.blacklist = FailureBlacklist(cache: cache)
        self.servePolicy = ServePolicy(
            freshness: Freshness(maxAge: options.maxAge), isRefreshing: options.refresh, isOffline: options.offline)
        var pacing = options.pacing
        pacing.retryAfterCap = options.retryPolicy.retryAfterCap
        self.engine = CurlEngine(maxTransfers: options.concurrency, pacing: pacing)
        self.files = BlockingPool(threads: Self.fileThreads, name: "sdfetch-files")
        self.remote = RemoteTier(options: options)
        if usesHostMemory, !options.retryFailed {
            let remembered = HostDownMemory(cache: cache).active(now: now(), within: options.hostDownFor)
            engine.hostHealth.rememberDown(remembered, now: now(), limit: options.hostFailures)
        }
    }

    /// Whether hosts found down are remembered across runs (`--host-down-for`): not
    /// offline (a read-only cache), nor with host health off.
    private var usesHostMemory: Bool {
        options.hostDownFor > .zero && !options.offline && options.hostFailures > 0
    }

    /// Threads for those waits, started as needed: enough that stores to other buckets go on
    /// while a few wait on a bucket that a `clean` elsewhere holds for a batch.
    static let fileThreads = 4

    /// The result for `key`; `spelling` is the input text reported as `url`: the cache
    /// lookup, then the rest when the cache does not answer.
    public func fetch(_ key: URLKey, spelling: String) async -> FetchResult {
        let started = ContinuousClock.now
        switch probe(key, spelling: spelling) {
        case .answered(var result):
            result.duration = ContinuousClock.now - started
            return result
        case .needsNetwork(let stale):
            return await fetch(key, spelling: spelling, after: stale)
        }
    }

    /// The hosts given up so far in this run (`host-down`) and why, for a line each.
    public var downHosts: [DownHost] { engine.hostHealth.downHosts }

    /// How many hosts were given up so far, for the progress bar.
    public var downHostCount: Int { engine.hostHealth.downCount }

    /// Transfers in flight, URLs waiting to retry and hosts given up, now.
    public var networkActivity: NetworkActivity {
        NetworkActivity(
            inFlight: engine.runningCount,
            retrying: retrying.load(ordering: .relaxed), hostsDown: engine.hostHealth.downCount)
    }

    /// Hosts with at least `minimum` transfers of a second or more so far, the most time first.
    public func slowHosts(minimum: Int) -> [SlowHost] { engine.hostHealth.slowHosts(minimum: minimum) }

    /// Interrupts every transfer (Ctrl-C) and every verification under way (the walkers and
    /// decoders ask ``Interruption/isRequested``); their results come back `failed` with
    /// `interrupted`. Returns at once.
    public func cancelAll() {
        engine.cancelAll()
    }

    /// Stops the transfer thread once no transfer is left, then the file threads, remembers
    /// the hosts found down in the cache (``HostDownMemory``) and forgets those that answered,
    /// and returns when all have
    /// ended; ``withFetcher(options:cache:now:notes:isolation:_:)`` calls it on every exit.
    public func shutdown() async {
        await remote?.finish()
        await engine.shutdown()
        await files.shutdown()
        if usesHostMemory {
            let memory = HostDownMemory(cache: cache)
            // Only a run that ignored the memory dialled a remembered origin.
            if options.retryFailed { memory.forget(engine.hostHealth.answeredOrigins) }
            memory.remember(engine.hostHealth.newlyDownForMemory, at: now())
        }
    }

    // MARK: - The steps of one URL

    /// What the cache-lookup step decided.
    public enum Probe: Sendable {
        /// `cached`: the result, without a request.
        case answered(FetchResult)
        /// Nothing servable: the network step follows, with the stale record if there was one.
        case needsNetwork(stale: CacheEntry?)
    }

    /// The cache-lookup step: one probe of the index, synchronous, so ``FetchRun`` answers
    /// warm hits inline, without a task.
    ///
    /// `pin` (a row's `sha256`, lower-case hex): an entry recording other bytes is neither
    /// served nor revalidated (a `304` would confirm the wrong bytes); the URL is fetched
    /// again and its body judged against the pin.
    ///
    /// A pinned hit is hashed (the file, not its record: whoever can write the cache can
    /// write a record) and delivered from the descriptor it hashed. An entry over
    /// `--max-bytes` is not served: it is fetched again, judged as it arrives.
    public func probe(_ key: URLKey, spelling: String, pin: String? = nil) -> Probe {
        switch cache.lookup(key, serving: servePolicy, now: now()) {
        case .fresh(let entry) where entry.bytes > options.maxBytes:
            guard options.offline else { return .needsNetwork(stale: nil) }
            return .answered(tooLargeResult(entry, key: key, spelling: spelling))
        case .fresh(let entry) where pin == nil:
            return .answered(cachedResult(entry, key: key, spelling: spelling, status: .cached))
        case .fresh(let entry) where entry.sha256 == pin:
            return pinnedHit(entry, key: key, spelling: spelling, pin: pin ?? "")
        case .stale(let entry) where (pin == nil || entry.sha256 == pin) && entry.bytes <= options.maxBytes:
            return .needsNetwork(stale: entry)
        case .fresh, .stale, .miss: return .needsNetwork(stale: nil)
        }
    }

    /// A fresh entry whose record carries the pin: served when its file hashes to it, with
    /// the hash computed and the descriptor hashed; else fetched again (or, `--offline`,
    /// failed with the hash the file has).
    private func pinnedHit(_ entry: CacheEntry, key: URLKey, spelling: String, pin: String) -> Probe {
        guard let held = cache.hold(entry, for: key), let actual = held.sha256() else {
            return .needsNetwork(stale: nil)
        }
        guard actual == pin else {
            guard options.offline else { return .needsNetwork(stale: nil) }
            let failure = Self.pinMismatch(actual, pin, cached: true)
            var result = failedResult(key, spelling: spelling, failure, httpStatus: nil)
            result.sha256 = actual
            return .answered(result)
        }
        var result = cachedResult(entry, key: key, spelling: spelling, status: .cached)
        result.sha256 = actual
        result.heldImage = held
        return .answered(result)
    }

    /// `--offline`, an entry over `--max-bytes`: the verdict a download of it would reach.
    private func tooLargeResult(_ entry: CacheEntry, key: URLKey, spelling: String) -> FetchResult {
        let failure = FetchFailure(
            .tooLarge, "the cached image's \(entry.bytes) bytes exceed \(ByteCountText.render(options.maxBytes))")
        return failedResult(key, spelling: spelling, failure, httpStatus: nil)
    }

    /// The steps after a lookup that did not answer: `--offline` stops here; an active
    /// blacklist record gives `skipped` without a request (unless `--retry-failed`); else
    /// the request, conditional when `stale`'s file still holds its bytes, and its outcome:
    /// `revalidated` on a `304`, `downloaded` on a verified `2xx`, else `failed`.
    ///
    /// `pin`: a body whose SHA-256 differs fails `hash-mismatch`, neither stored nor recorded.
    func fetch(
        _ key: URLKey, spelling: String, after stale: CacheEntry?, pin: String? = nil
    ) async
        -> FetchResult
    {
        let started = ContinuousClock.now
        // Verifications under way ask the engine's latch (Ctrl-C) as well as their task.
        var result = await Interruption.$current.withValue(engine.interruption) {
            await decide(key, spelling: spelling, after: stale, pin: pin)
        }
        result.duration = ContinuousClock.now - started
        return result
    }

    private func decide(
        _ key: URLKey, spelling: String, after stale: CacheEntry?, pin: String?
    ) async -> FetchResult {
        if options.offline {
            if let pin, let held = cache.entry(for: key), held.sha256 != pin {
                var result = failedResult(
                    key, spelling: spelling, Self.pinMismatch(held.sha256, pin, cached: true), httpStatus: nil)
                result.sha256 = held.sha256
                return result
            }
            // An entry whose file no longer holds its bytes is not served; say so, not "missing".
            let detail =
                cache.hasChangedFile(for: key)
                ? "the cached file's bytes changed since they were stored (sdfetch verify removes the entry)"
                : "not in the cache"
            return failedResult(key, spelling: spelling, FetchFailure(.offlineMiss, detail), httpStatus: nil)
        }
        // The record's read (one `openat`, nearly always ENOENT) stays on this task, as the
        // lookup's `fstatat` does: no lock, no pipe, and a hop would cost more than the call.
        // A record was made by a request without the parameters the key leaves out (none is
        // made with them): it never skips a request that carries them.
        var hadRecord = options.retryFailed
        if !options.retryFailed, !key.carriesIgnoredParameters, let record = blacklist.record(for: key) {
            if record.isActive(now: now(), maxAge: options.maxAge) {
                // No request: the status is the one the record keeps (an `http-404` record's 404).
                return FetchResult(
                    url: spelling, key: key, status: .skipped, httpStatus: record.httpStatus, failure: record.failure)
            }
            hadRecord = true
        }
        if stale == nil, let served = await remoteResult(key, spelling: spelling, pin: pin, clearingRecord: hadRecord) {
            return served
        }
        let result = await request(
            key, spelling: spelling, revalidating: stale.flatMap { cache.checked($0, for: key) },
            clearingRecord: hadRecord, pin: pin)
        if let failure = result.failure, failure.kind.isPermanent, !Self.isUnderStricterLimit(failure, options) {
            // The record is renamed into place under the bucket's lock: off the cooperative pool.
            await files.run { [blacklist] in _ = blacklist.insert(failure, for: key) }
        }
        return result
    }

    /// One request for `key`, conditional when `entry` has validators, and its result; a
    /// Whether `failure` is a limit's verdict under a limit this run set below the default
    /// (`--max-bytes 100`): the image is not at fault, and a record would skip the URL for
    /// `--max-age` in runs with the usual limits (<doc:Fetching#Failed-URL-blacklist>).
    static func isUnderStricterLimit(_ failure: FetchFailure, _ options: FetchOptions) -> Bool {
        let defaults = FetchOptions()
        switch failure.kind {
        case .tooLarge: return options.maxBytes < defaults.maxBytes
        case .tooManyPixels: return options.maxPixels < defaults.maxPixels
        default: return false
        }
    }

    /// success also removes the key's blacklist record when `clearingRecord`.
    private func request(
        _ key: URLKey, spelling: String, revalidating stale: CacheEntry?, clearingRecord: Bool, pin: String?
    ) async -> FetchResult {
        // The file that a `304` would confirm, held from now on (a `clean` may remove its name
        // meanwhile), and hashed when pinned; without it the request is unconditional.
        let held = stale.flatMap { cache.hold($0, for: key) }.flatMap { held in
            pin == nil || held.sha256() == pin ? held : nil
        }
        let entry = held == nil ? nil : stale
        let validators = entry.map(Self.conditionalHeaders) ?? []
        // This request's options: the run's, plus the entry's validators.
        var request = transferRequest(key)
        request.headers += validators
        if !validators.isEmpty {
            note(spelling, "revalidating (\(validators.map(Self.headerName).joined(separator: ", ")))")
        }
        switch await download(request, key: key, spelling: spelling, isConditional: !validators.isEmpty) {
        case .notModified(let response):
            // isConditional implies an entry lent the validators.
            guard let entry else { preconditionFailure("a 304 outcome without a conditional request") }
            // A publisher who opts out later says so on the 304 too: the entry is not renewed.
            if response.optsOut && !options.ignoreOptOuts {
                return failedResult(key, spelling: spelling, Self.optedOut, httpStatus: 304)
            }
            return revalidated(
                entry, held: held, response: response, key: key, spelling: spelling, clearingRecord: clearingRecord)
        case .failed(let response, let failure):
            return failedResult(key, spelling: spelling, failure, httpStatus: response.httpStatus)
        case .body(let response):
            return await store(response, key: key, spelling: spelling, clearingRecord: clearingRecord, pin: pin)
        }
    }

    /// `key`'s request with the run's options.
    private func transferRequest(_ key: URLKey) -> TransferRequest {
        var request = TransferRequest(
            url: key.request, headers: options.headers, userAgent: options.userAgent, timeout: options.timeout,
            maxBytes: options.maxBytes, maxRedirects: options.maxRedirects)
        request.maxTime = options.maxTime
        request.lowSpeed = options.lowSpeed.isOn ? options.lowSpeed : nil
        request.connection = options.connection
        request.spillFolder = cache.spillFolder
        request.meter = meter
        return request
    }

    /// Tells the engine that `key` will need the network once its turn comes (the caller
    /// reads ahead of the transfers; `distant`: far ahead, after nearer hosts): its host is
    /// probed now if new (``CurlEngine/expect(_:hostFailureLimit:distant:)``). Nothing with
    /// `--offline`.
    func expectNetwork(_ key: URLKey, distant: Bool = false) {
        guard !options.offline else { return }
        // Once a host: the engine keeps its own record; this one spares it a request a URL
        // on lists of few hosts (past the cap, the engine's record alone).
        let host = key.origin
        let isNew = expectedHosts.withLock { hosts in
            guard hosts.count < Self.expectedHostsLimit else { return true }
            // Announced as distant (by the scout), once more when its turn nears.
            guard let wasDistant = hosts[host] else {
                hosts[host] = distant
                return true
            }
            guard wasDistant, !distant else { return false }
            hosts[host] = false
            return true
        }
        guard isNew else { return }
        engine.expect(transferRequest(key), hostFailureLimit: options.hostFailures, distant: distant)
    }

    private static let expectedHostsLimit = 100_000

    static let optedOut = FetchFailure(.optedOut, "the server opts this image out of AI use (X-Robots-Tag: noai)")

    /// `If-None-Match` / `If-Modified-Since` from the entry's validators (none without them).
    static func conditionalHeaders(_ entry: CacheEntry) -> [String] {
        var headers: [String] = []
        if let etag = DiskCache.keepable(entry.etag) { headers.append("If-None-Match: \(etag)") }
        if let lastModified = DiskCache.keepable(entry.lastModified) {
            headers.append("If-Modified-Since: \(lastModified)")
        }
        return headers
    }

    /// A `304` confirmed `entry`: renew its times (and validators) without a body (one
    /// index line appended: no lock, page cache only, so on this task).
    private func revalidated(
        _ entry: CacheEntry, held: HeldImage?, response: TransferResponse, key: URLKey, spelling: String,
        clearingRecord: Bool
    ) -> FetchResult {
        do throws(FetchFailure) {
            // nil: another process stored a newer body meanwhile; serve that one.
            let current =
                try cache.renew(entry, for: key, etag: response.etag, lastModified: response.lastModified)
                ?? cache.entry(for: key) ?? entry
            if clearingRecord { blacklist.remove([key]) }
            var result = cachedResult(current, key: key, spelling: spelling, status: .revalidated)
            result.httpStatus = 304
            // The confirmed bytes, delivered even if a `clean` removed the entry after the 304.
            if current.sha256 == entry.sha256 { result.heldImage = held }
            return result
        } catch {
            return failedResult(key, spelling: spelling, error, httpStatus: 304)
        }
    }

    /// Verifies a `2xx` body and stores it as the key's entry (replacing any older one).
    ///
    /// The store's writes meet only the page cache and stay on this task: a hop to another
    /// thread per download cost six context switches and a third more CPU on a cold run.
    /// What may wait on another process, the bucket lock a replacement takes while a `clean`
    /// holds it, goes to ``files``.
    private func store(
        _ response: TransferResponse, key: URLKey, spelling: String, clearingRecord: Bool, pin: String?
    ) async -> FetchResult {
        if response.optsOut && !options.ignoreOptOuts {
            return failedResult(key, spelling: spelling, Self.optedOut, httpStatus: response.httpStatus)
        }
        let verifier = ImageVerifier(mode: options.verify, maxPixels: options.maxPixels)
        // A spilled body is read back here, on a pool thread: at most one per thread at a time.
        guard let body = response.spilled.map({ $0.bytes() }) ?? response.body else {
            let failure = FetchFailure(.io, "cannot read the download back from the cache's tmp folder: \(errnoText())")
            return failedResult(key, spelling: spelling, failure, httpStatus: response.httpStatus)
        }
        if let declared = response.declaredSHA256, let failure = Self.digestMismatch(body, declared: declared) {
            return failedResult(key, spelling: spelling, failure, httpStatus: response.httpStatus)
        }
        if let pin, case let actual = Self.sha256Hex(body), actual != pin {
            var result = failedResult(
                key, spelling: spelling, Self.pinMismatch(actual, pin, cached: false), httpStatus: response.httpStatus)
            result.sha256 = actual
            result.bytes = Int64(body.count)
            return result
        }
        let image: VerifiedImage
        switch verifier.verify(body) {
        case .success(let verified): image = verified
        case .failure(var failure):
            // An error page served as 200 is the common case: the server's own word says so.
            if failure.kind == .notAnImage, let type = response.mediaType, !type.hasPrefix("image/") {
                failure = FetchFailure(.notAnImage, "\(failure.detail): the server sent \(type)")
            }
            return failedResult(key, spelling: spelling, failure, httpStatus: response.httpStatus)
        }
        do throws(FetchFailure) {
            let store = { @Sendable [cache] (waiting: Bool) throws(FetchFailure) -> CacheEntry? in
                try cache.store(
                    body, spilled: response.spilled, for: key, image: image, etag: response.etag,
                    lastModified: response.lastModified, waitingForLock: waiting)
            }
            var stored = try store(false)
            if stored == nil { stored = try await files.run { () throws(FetchFailure) in try store(true) } }
            guard let entry = stored else { preconditionFailure("a store that may wait always stores") }
            if clearingRecord { blacklist.remove([key]) }
            remote?.upload(entry, key: key, bytes: body)
            var result = cachedResult(entry, key: key, spelling: spelling, status: .downloaded)
            result.httpStatus = response.httpStatus
            return result
        } catch {
            return failedResult(key, spelling: spelling, error, httpStatus: response.httpStatus)
        }
    }

    func cachedResult(
        _ entry: CacheEntry, key: URLKey, spelling: String, status: FetchStatus
    ) -> FetchResult {
        var result = FetchResult(
            url: spelling, key: key, status: status, path: cache.bodyPath(for: key), format: entry.format,
            bytes: entry.bytes, width: entry.width, height: entry.height, sha256: entry.sha256)
        result.fileStamp = entry.stamp
        return result
    }

    func failedResult(
        _ key: URLKey, spelling: String, _ failure: FetchFailure, httpStatus: Int?
    ) -> FetchResult {
        FetchResult(
            url: spelling, key: key, status: .failed, httpStatus: httpStatus == 0 ? nil : httpStatus, failure: failure)
    }
}
