/// Why a URL failed: one error kind (<doc:Fetching#Results>) plus a human detail.
public struct FetchFailure: Error, Sendable, Equatable {
    /// The error kinds. `label` renders the word printed and written to `--json`.
    public enum Kind: Sendable, Hashable {
        case http(Int)
        case timeout
        case connect
        case dns
        case tls
        case tooLarge
        case tooManyPixels
        case notAnImage
        case corruptImage
        case truncated
        case tooManyRedirects
        case badRedirect
        case hostDown
        case offlineMiss
        case io
        case invalidURL
        /// A row of a table whose fault is the row's, not its URL's: a wrong number of
        /// fields, broken JSON, a malformed pin, a pin another row of the URL contradicts.
        case invalidRow
        case interrupted
        case optedOut
        case hashMismatch

        /// The printed spelling, e.g. `http-404`, `not-an-image`.
        public var label: String {
            switch self {
            case .http(let code): "http-\(code)"
            case .timeout: "timeout"
            case .connect: "connect"
            case .dns: "dns"
            case .tls: "tls"
            case .tooLarge: "too-large"
            case .tooManyPixels: "too-many-pixels"
            case .notAnImage: "not-an-image"
            case .corruptImage: "corrupt-image"
            case .truncated: "truncated"
            case .tooManyRedirects: "too-many-redirects"
            case .badRedirect: "bad-redirect"
            case .hostDown: "host-down"
            case .offlineMiss: "offline-miss"
            case .io: "io"
            case .invalidURL: "invalid-url"
            case .invalidRow: "invalid-row"
            case .interrupted: "interrupted"
            case .optedOut: "opted-out"
            case .hashMismatch: "hash-mismatch"
            }
        }

        /// Parses ``label`` back (blacklist records store it).
        public init?(label: String) {
            if label.hasPrefix("http-"), let code = Int(label.dropFirst(5)) {
                self = .http(code)
                return
            }
            let all: [Kind] = [
                .timeout, .connect, .dns, .tls, .tooLarge, .tooManyPixels, .notAnImage, .corruptImage,
                .truncated, .tooManyRedirects, .badRedirect, .hostDown, .offlineMiss, .io, .invalidURL,
                .invalidRow, .interrupted, .optedOut, .hashMismatch,
            ]
            guard let kind = all.first(where: { $0.label == label }) else { return nil }
            self = kind
        }

        /// Whether the failed-URL blacklist records it
        /// (<doc:Fetching#Failed-URL-blacklist>). Everything else is transient: retried
        /// within the run, never recorded. A `407` is the proxy asking for its credentials:
        /// the proxy's failure, not the URL's.
        public var isPermanent: Bool {
            switch self {
            case .http(let code): (400...499).contains(code) && ![407, 408, 425, 429].contains(code)
            case .notAnImage, .corruptImage, .tooLarge, .tooManyPixels, .tooManyRedirects, .badRedirect: true
            // The publisher's no is as lasting as a 404; a digest mismatch may be a bad copy.
            case .optedOut: true
            case .timeout, .connect, .dns, .tls, .truncated, .hostDown, .offlineMiss, .io, .invalidURL,
                .invalidRow, .interrupted, .hashMismatch:
                false
            }
        }

        /// Whether another try within this run may succeed (`--retries`).
        public var isRetryable: Bool {
            switch self {
            case .http(let code): code >= 500 || [408, 425, 429].contains(code)
            case .timeout, .connect, .dns, .tls, .truncated: true
            default: false
            }
        }
    }

    public let kind: Kind
    /// Lower-case, no final period, names the thing: "body exceeds 50 MB".
    public let detail: String
    /// For `host-down`: the kind of failure that ended the host (`dns` for a name that does
    /// not resolve, `timeout` for a host that gave no answer, `connect`...), so a domain
    /// that is gone and a server that does not answer stay apart; nil for other kinds.
    public let hostCause: Kind?
    /// For `host-down`: an earlier run found the host down and the cache remembers it
    /// (`--host-down-for`), so that run reported it; false when found down in this run.
    public let isHostRemembered: Bool

    public init(_ kind: Kind, _ detail: String, hostCause: Kind? = nil, isHostRemembered: Bool = false) {
        self.kind = kind
        // curl's messages quote the proxy URL, password and all: masked where they enter.
        self.detail = Redaction.masked(detail)
        self.hostCause = kind == .hostDown ? hostCause : nil
        self.isHostRemembered = kind == .hostDown && isHostRemembered
    }
}
