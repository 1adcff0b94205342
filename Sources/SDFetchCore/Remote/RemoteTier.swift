import FoundationEssentials
import Synchronization

/// A run's remote caches, asked in order after a local miss and written to after a
/// download (SDFetchCore.docc, Fetching, "Remote cache"), with their counts and health.
///
/// Nothing a remote sends is trusted here: a record must be well formed and name the key
/// asked for, and the object must have the record's size and SHA-256; the caller then
/// verifies the image as it does network bytes. A remote that fails ``errorLimit`` times,
/// or once without answering, is switched off for the rest of the run (one
/// ``RemoteWarning``), so a remote that is down or hangs costs one round of timeouts,
/// about a second, and never fails a URL.
///
/// Shared by every fetch of the run; its state is atomics and a mutex, its requests run on
/// ``RemoteWorkers``' threads.
public final class RemoteTier: Sendable {
    private let remotes: [any RemoteCache]
    private let health: [RemoteHealth]
    private let workers: RemoteWorkers
    let mode: RemoteCacheMode
    private let hits = Atomic<Int>(0)
    private let misses = Atomic<Int>(0)
    private let uploads = Atomic<Int>(0)
    private let errors = Atomic<Int>(0)
    private let skippedUploads = Atomic<Int>(0)
    /// Bytes of the uploads queued or running.
    private let uploadBytes = Atomic<Int>(0)
    private let offWarnings = Mutex<[RemoteWarning]>([])

    /// Failures after which a remote is switched off: one timeout can be a hiccup; three
    /// in one run are a remote that costs more than it gives.
    static let errorLimit = 3
    /// Threads (so lookups at once): a lookup over loopback takes well under a millisecond,
    /// so a few keep thousands of URLs a second going, and `-j` transfers to the origin wait
    /// on none of them.
    static let threads = 8
    /// Uploads queued or running, and their bytes, past which a download is not uploaded:
    /// bounds the bodies held in memory for them, and a remote that stores more slowly than
    /// the origin serves (a WebDAV `PUT` is a file written and renamed) never holds a run
    /// back. What it missed, a later runner uploads.
    static let uploadsInFlight = 256
    static let uploadBytesInFlight = 64 << 20
    /// How long a run's end waits for its uploads.
    static let uploadWait: Duration = .seconds(10)
    /// A record is small; more is not a record.
    static let recordLimit: Int64 = 64 << 10
    static let recordTimeout: Duration = .seconds(1)

    convenience init(options: RemoteCacheOptions, connection: ConnectionOptions, userAgent: String) {
        let remotes: [any RemoteCache] = options.urls.compactMap { url in
            if let address = RemoteRedisAddress(parsing: url) { return RemoteRedisCache(url: url, address: address) }
            guard RemoteCacheOptions.isSupported(url) else { return nil }
            return RemoteHTTPCache(
                url: url, connection: connection, bearerToken: options.bearerToken, userAgent: userAgent)
        }
        self.init(remotes: remotes, mode: options.mode)
    }

    init(remotes: [any RemoteCache], mode: RemoteCacheMode) {
        self.remotes = remotes
        self.health = remotes.map { _ in RemoteHealth() }
        self.mode = mode
        self.workers = RemoteWorkers(threads: Self.threads, remotes: remotes)
    }

    /// This run's counts so far; final once the fetcher has shut down.
    public var counts: RemoteCounts {
        var counts = RemoteCounts()
        counts.hits = hits.load(ordering: .relaxed)
        counts.misses = misses.load(ordering: .relaxed)
        counts.uploads = uploads.load(ordering: .relaxed)
        counts.errors = errors.load(ordering: .relaxed)
        counts.skippedUploads = skippedUploads.load(ordering: .relaxed)
        return counts
    }

    /// The remotes switched off in this run, in the order it happened.
    public var warnings: [RemoteWarning] { offWarnings.withLock { $0 } }

    // MARK: - Lookups

    /// An image a remote holds for a key: its bytes match the record's size and SHA-256,
    /// not yet verified as an image.
    struct Hit: Sendable {
        let bytes: [UInt8]
        let record: RemoteRecord
        let remote: Int
    }

    /// The first remote's answer for `key` that `accepts` (freshness, `--max-bytes`, a pin)
    /// allows, or nil (counted as a miss). A remote's failure counts against its health and
    /// the next remote is asked.
    func lookup(_ key: URLKey, accepts: @escaping @Sendable (RemoteRecord) -> Bool) async -> Hit? {
        let live = remotes.indices.filter { !health[$0].isOff }
        guard !live.isEmpty else {
            misses.add(1, ordering: .relaxed)
            return nil
        }
        let expected = key.redacted
        let hit = await workers.lookup { [self] connections -> Hit? in
            for index in live where !health[index].isOff {
                do throws(RemoteFailure) {
                    if let hit = try lookup(key.digest, expected: expected, on: connections[index], accepts: accepts) {
                        return Hit(bytes: hit.1, record: hit.0, remote: index)
                    }
                } catch {
                    failed(index, error)
                }
            }
            return nil
        }
        if hit == nil { misses.add(1, ordering: .relaxed) }
        return hit
    }

    /// One remote's record and object for `digest`; nil when it has none that `accepts`
    /// allows (or a record without its object: a remote evicts the two apart).
    private func lookup(
        _ digest: KeyDigest, expected: String, on connection: any RemoteConnection,
        accepts: (RemoteRecord) -> Bool
    ) throws(RemoteFailure) -> (RemoteRecord, [UInt8])? {
        guard let text = try connection.read(.record(digest), maxBytes: Self.recordLimit, timeout: Self.recordTimeout)
        else { return nil }
        guard let record = RemoteRecord.decoded(text), record.isWellFormed else {
            throw RemoteFailure("\(RemotePath.record(digest).text) is not a record")
        }
        guard record.key == expected, accepts(record) else { return nil }
        let path = RemotePath.object(sha256: record.sha256)
        guard let bytes = try connection.read(path, maxBytes: record.bytes, timeout: Self.timeout(for: record.bytes))
        else { return nil }
        guard Int64(bytes.count) == record.bytes, Fetcher.sha256Hex(bytes) == record.sha256 else {
            throw RemoteFailure("\(path.text) does not hold the bytes its name and record give")
        }
        return (record, bytes)
    }

    /// The caller verified the hit's image and served it.
    func served(_ hit: Hit) {
        hits.add(1, ordering: .relaxed)
    }

    /// The caller refused the hit's bytes (not an image, too many pixels): the remote's
    /// error, and the URL a miss.
    func refused(_ hit: Hit, _ failure: FetchFailure) {
        failed(hit.remote, RemoteFailure("\(RemotePath.object(sha256: hit.record.sha256).text): \(failure.kind.label)"))
        misses.add(1, ordering: .relaxed)
    }

    /// The remote that answered `hit`, for `-v`.
    func name(of hit: Hit) -> String { remotes[hit.remote].name }

    // MARK: - Uploads

    /// Queues a download's upload to every remote still on (read-write mode): the object,
    /// then the record. Returns at once; nothing is queued when ``uploadsInFlight`` uploads
    /// or ``uploadBytesInFlight`` bytes already are (counted in ``RemoteCounts/skippedUploads``).
    func upload(_ entry: CacheEntry, key: URLKey, bytes: [UInt8]) {
        guard mode == .readWrite, health.contains(where: { !$0.isOff }) else { return }
        guard workers.pendingUploads < Self.uploadsInFlight,
            uploadBytes.load(ordering: .relaxed) + bytes.count <= Self.uploadBytesInFlight
        else {
            skippedUploads.add(1, ordering: .relaxed)
            return
        }
        let record = RemoteRecord(entry, key: key)
        uploadBytes.add(bytes.count, ordering: .relaxed)
        let job: RemoteWorkers.Job = { [self] connections in
            defer { uploadBytes.subtract(bytes.count, ordering: .relaxed) }
            var stored = false
            for index in remotes.indices where !health[index].isOff {
                do throws(RemoteFailure) {
                    try connections[index].upload(
                        bytes, at: .object(sha256: record.sha256), record: record.encoded, at: .record(key.digest),
                        timeout: Self.timeout(for: record.bytes))
                    stored = true
                } catch {
                    failed(index, error)
                }
            }
            if stored { uploads.add(1, ordering: .relaxed) }
        }
        workers.upload(job)
    }

    /// Waits for the queued uploads, at most ``uploadWait``; the fetcher's shutdown calls it.
    func finish() async {
        await workers.finish(within: Self.uploadWait)
    }

    // MARK: - Health

    private func failed(_ index: Int, _ failure: RemoteFailure) {
        errors.add(1, ordering: .relaxed)
        guard health[index].failed(unanswered: failure.isUnanswered) else { return }
        let warning = RemoteWarning(remote: remotes[index].name, detail: Redaction.masked(failure.detail))
        offWarnings.withLock { $0.append(warning) }
    }

    /// A second for the request, plus the time the bytes take at 8 MB/s: a remote slower
    /// than that is slower than most origins.
    static func timeout(for bytes: Int64) -> Duration {
        .seconds(1) + .milliseconds(bytes / 8_000)
    }
}

/// One remote's failures in a run.
final class RemoteHealth: Sendable {
    private let failures = Atomic<Int>(0)
    private let off = Atomic<Bool>(false)

    var isOff: Bool { off.load(ordering: .relaxed) }

    /// Counts a failure; true for the one that switches the remote off. `unanswered` (no
    /// connection, or no answer in time) switches it off at once: that failure cost the
    /// most a request may, and the threads would each pay it again meanwhile.
    func failed(unanswered: Bool) -> Bool {
        let count = failures.add(1, ordering: .relaxed).newValue
        guard unanswered || count >= RemoteTier.errorLimit else { return false }
        return off.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
    }
}
