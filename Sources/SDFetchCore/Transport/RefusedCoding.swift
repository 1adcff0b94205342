/// A coding a response used that the request did not offer (``ContentCoding``): the body is
/// refused from its header, a `not-an-image` failure of the URL.
enum RefusedCoding: Equatable {
    /// A `Content-Encoding` coding outside `Accept-Encoding` (`zstd`).
    case content(String)
    /// A `Transfer-Encoding` coding other than `chunked` (`gzip`, `zstd`): sdfetch sends no `TE`.
    case transfer(String)

    /// The failure's detail: "the body is 'zstd'-coded, which was not offered (gzip, deflate, br)".
    var detail: String {
        switch self {
        case .content(let name):
            "the body is '\(name)'-coded, which was not offered (\(ContentCoding.offered ?? "none"))"
        case .transfer(let name):
            "the body is '\(name)'-transfer-coded, which was not offered (chunked only)"
        }
    }
}
