/// What came back from one transfer, successful or not.
public struct TransferResponse: Sendable {
    /// nil when the transfer completed at the HTTP level (whatever the status code).
    public var failure: FetchFailure?
    /// Final response status after redirects; 0 when no response arrived.
    public var httpStatus: Int
    /// The body of a 2xx response when it stayed in memory; empty otherwise.
    public var body: [UInt8]
    /// The body of a 2xx response that went to a file as it arrived (see ``SpilledBody``);
    /// `body` is then empty.
    public var spilled: SpilledBody?
    public var etag: String?
    public var lastModified: String?
    /// `Retry-After` in seconds, when the server sent the delta form or a date.
    public var retryAfter: Double?
    /// The response's `X-Robots-Tag` opts the image out of AI use for sdfetch.
    public var optsOut = false
    /// The base64 SHA-256 the server declared for the body it sent uncoded (`Content-Digest`
    /// or `Repr-Digest`); nil when it declared none or coded the body.
    public var declaredSHA256: String?
    /// The media type the final response declared (`text/html`, parameters left out,
    /// lower-cased): named when the body is no image.
    public var mediaType: String?
    /// Redirect hops curl followed, and the URL of the last one (for `-v`).
    public var redirectCount = 0
    public var finalURL: String?
    /// The connection was refused, reset or closed before any byte of an answer, or the
    /// server broke off the TLS handshake (not a failed certificate check), with no proxy
    /// in the way: evidence about the host itself (``HostHealth``); nil otherwise.
    var refusal: HostRefusal?

    public init(
        failure: FetchFailure? = nil, httpStatus: Int = 0, body: [UInt8] = [], etag: String? = nil,
        lastModified: String? = nil, retryAfter: Double? = nil
    ) {
        self.failure = failure
        self.httpStatus = httpStatus
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
        self.retryAfter = retryAfter
    }
}
