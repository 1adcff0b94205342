/// The outcome of one unique URL (or one invalid input line): a value, never a throw.
///
/// A value type whose fields live in one shared box, copied only when a shared result is
/// changed: a result is handed on five or six times between its lookup and its line (about
/// fifteen references a copy otherwise), and a warm run makes 100,000 of them a second.
public struct FetchResult: Sendable {
    /// The first spelling met in the input, trimmed.
    public var url: String {
        get { storage.fields.url }
        set { unique().fields.url = newValue }
    }

    /// The identity; nil for an `invalid` line.
    public var key: URLKey? {
        get { storage.fields.key }
        set { unique().fields.key = newValue }
    }

    public var status: FetchStatus {
        get { storage.fields.status }
        set { unique().fields.status = newValue }
    }

    /// The file holding the image: the cache body file, or its `-o` copy once delivered
    /// (``ResultDelivery``).
    public var path: String? {
        get { storage.fields.path }
        set { unique().fields.path = newValue }
    }

    public var format: ImageFormat? {
        get { storage.fields.format }
        set { unique().fields.format = newValue }
    }

    /// Body size in bytes (0 when there is no body).
    public var bytes: Int64 {
        get { storage.fields.bytes }
        set { unique().fields.bytes = newValue }
    }

    public var width: Int? {
        get { storage.fields.width }
        set { unique().fields.width = newValue }
    }

    public var height: Int? {
        get { storage.fields.height }
        set { unique().fields.height = newValue }
    }

    /// SHA-256 of the image bytes, 64 hex digits, when there is an image.
    public var sha256: String? {
        get { storage.fields.sha256 }
        set { unique().fields.sha256 = newValue }
    }

    /// The cache file's mtime in whole seconds (its stamp, see the README's "Cache format"):
    /// a copy made with it can later be recognised by size and time alone.
    public var fileStamp: Int64? {
        get { storage.fields.fileStamp }
        set { unique().fields.fileStamp = newValue }
    }

    /// The last HTTP status seen, when a request was sent.
    public var httpStatus: Int? {
        get { storage.fields.httpStatus }
        set { unique().fields.httpStatus = newValue }
    }

    public var failure: FetchFailure? {
        get { storage.fields.failure }
        set { unique().fields.failure = newValue }
    }

    /// Further occurrences of the key in the input, coalesced into this result.
    public var duplicates: Int {
        get { storage.fields.duplicates }
        set { unique().fields.duplicates = newValue }
    }

    /// `FILE:LINE` of an invalid line.
    public var source: String? {
        get { storage.fields.source }
        set { unique().fields.source = newValue }
    }

    /// Wall time spent on this URL.
    public var duration: Duration {
        get { storage.fields.duration }
        set { unique().fields.duration = newValue }
    }

    public init(
        url: String, key: URLKey?, status: FetchStatus, path: String? = nil, format: ImageFormat? = nil,
        bytes: Int64 = 0, width: Int? = nil, height: Int? = nil, sha256: String? = nil, httpStatus: Int? = nil,
        failure: FetchFailure? = nil, duplicates: Int = 0, source: String? = nil, duration: Duration = .zero
    ) {
        storage = Storage(
            Fields(
                url: url,
                key: key,
                status: status,
                path: path,
                format: format,
                bytes: bytes,
                width: width,
                height: height,
                sha256: sha256,
                fileStamp: nil,
                httpStatus: httpStatus,
                failure: failure,
                duplicates: duplicates,
                source: source,
                duration: duration))
    }

    private var storage: Storage

    /// The box, made unique before a change (copy on write).
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        return storage
    }

    private struct Fields: Sendable {
        var url: String
        var key: URLKey?
        var status: FetchStatus
        var path: String?
        var format: ImageFormat?
        var bytes: Int64
        var width: Int?
        var height: Int?
        var sha256: String?
        var fileStamp: Int64?
        var httpStatus: Int?
        var failure: FetchFailure?
        var duplicates: Int
        var source: String?
        var duration: Duration
    }

    /// Mutated only through ``unique()``, when no other result shares it.
    private final class Storage: @unchecked Sendable {
        var fields: Fields

        init(_ fields: Fields) {
            self.fields = fields
        }
    }
}
