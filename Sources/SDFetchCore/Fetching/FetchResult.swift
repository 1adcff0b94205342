/// The outcome of one unique URL (or one invalid input line): a value, never a throw.
public struct FetchResult: Sendable {
    /// The first spelling met in the input, trimmed.
    public var url: String
    /// The identity; nil for an `invalid` line.
    public var key: URLKey?
    public var status: FetchStatus
    /// The file holding the image: the cache body file, or its `-o` copy once delivered
    /// (``ResultDelivery``).
    public var path: String?
    public var format: ImageFormat?
    /// Body size in bytes (0 when there is no body).
    public var bytes: Int64
    public var width: Int?
    public var height: Int?
    /// SHA-256 of the image bytes, 64 hex digits, when there is an image.
    public var sha256: String?
    /// The cache file's mtime in whole seconds (its stamp, see <doc:OnDiskFormat>):
    /// a copy made with it can later be recognised by size and time alone.
    public var fileStamp: Int64?
    /// The image file held open since it was checked (a revalidated or pinned hit), which
    /// the delivery step reads instead of opening the entry again: a `clean` meanwhile
    /// cannot take it away (``HeldImage``).
    public var heldImage: HeldImage?
    /// The remote cache that answered (`--remote-cache`; its URL, any password masked): the
    /// result is `cached`, from no local entry and no request to the origin.
    public var remote: String?
    /// The last HTTP status seen, when a request was sent.
    public var httpStatus: Int?
    public var failure: FetchFailure?
    /// Further occurrences of the key in the input, coalesced into this result.
    public var duplicates: Int
    /// `FILE:LINE` of an invalid line, or of the tabular row this result answers.
    public var source: String?
    /// The other columns of the tabular row this result answers; nil for plain lists.
    public var fields: RowFields?
    /// Wall time spent on this URL.
    public var duration: Duration
    /// Set by a delivery (``ResultDelivery``) whose entry file was gone when it opened it
    /// (``CachedImage/Unreadable/isGone``): a maintenance command removed it after the
    /// lookup. The run then fetches the URL once more instead of failing it.
    public var entryWasRemoved = false

    public init(
        url: String, key: URLKey?, status: FetchStatus, path: String? = nil, format: ImageFormat? = nil,
        bytes: Int64 = 0, width: Int? = nil, height: Int? = nil, sha256: String? = nil, httpStatus: Int? = nil,
        failure: FetchFailure? = nil, duplicates: Int = 0, source: String? = nil, duration: Duration = .zero
    ) {
        self.url = url
        self.key = key
        self.status = status
        self.path = path
        self.format = format
        self.bytes = bytes
        self.width = width
        self.height = height
        self.sha256 = sha256
        self.httpStatus = httpStatus
        self.failure = failure
        self.duplicates = duplicates
        self.source = source
        self.duration = duration
    }
}
