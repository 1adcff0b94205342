/// `--remote-cache`, `--remote-cache-mode` and the bearer token (README, "A cache shared
/// by a fleet").
public struct RemoteCacheOptions: Sendable, Equatable {
    /// The remotes' URLs, asked in this order: `http://`, `https://`, `redis://`.
    public var urls: [String] = []
    public var mode = RemoteCacheMode.readWrite
    /// Sent as `Authorization: Bearer ...` to HTTP remotes; the CLI reads it from
    /// `SDFETCH_REMOTE_CACHE_TOKEN`.
    public var bearerToken: String?

    public init() {}

    /// The URL schemes a remote may have.
    public static let schemes = ["http://", "https://", "redis://"]

    /// Whether `url` names a remote sdfetch can use: an `http://` or `https://` URL, or a
    /// `redis://` one ``RemoteRedisAddress`` reads.
    public static func isSupported(_ url: String) -> Bool {
        let lowered = url.lowercased()
        if lowered.hasPrefix("redis://") { return RemoteRedisAddress(parsing: url) != nil }
        return schemes.contains { lowered.hasPrefix($0) }
    }
}

/// Whether a run writes what it downloads to the remotes.
public enum RemoteCacheMode: String, Sendable, CaseIterable {
    /// Lookups and uploads.
    case readWrite = "read-write"
    /// Lookups only: for jobs that must not write what others will trust, such as a fork's
    /// pull request.
    case readOnly = "read-only"
}

/// What the remotes did in one run: `--summary`'s `remote` object and the summary line.
public struct RemoteCounts: Sendable, Equatable {
    /// URLs a remote answered.
    public var hits = 0
    /// URLs no remote had (and then went to the origin).
    public var misses = 0
    /// Downloads written to a remote.
    public var uploads = 0
    /// Requests that failed and answers that were refused (bad digest, not an image).
    public var errors = 0
    /// Downloads not uploaded because the remote was that far behind (``RemoteTier``'s
    /// bound on queued uploads).
    public var skippedUploads = 0

    public init() {}
}

/// A remote switched off for the rest of a run, and why: one warning each.
public struct RemoteWarning: Sendable, Equatable {
    /// The remote's URL, any password masked.
    public var remote: String
    /// The last failure's text.
    public var detail: String
}
