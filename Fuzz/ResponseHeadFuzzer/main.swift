import FoundationEssentials

@testable import SDFetchCore

/// libFuzzer entry point over the HTTP response head as curl hands it over, a line at a
/// time (``ResponseHead``): status lines, `Content-Length`, `Retry-After`,
/// `Content-Digest`/`Repr-Digest`, `X-Robots-Tag`, and the coding checks of
/// `Content-Encoding` and `Transfer-Encoding` (``ContentCoding``).
///
/// The input is cut at each LF (kept, as curl keeps CRLF). Checked, not only run: a
/// refused coding is never `chunked`, never empty, and its detail names it.
@_cdecl("LLVMFuzzerTestOneInput")
public func responseHeadFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    var head = ResponseHead()
    var start = 0
    input.bytes.withUnsafeBytes { bytes in
        for end in bytes.indices where bytes[end] == 0x0A || end == bytes.count - 1 {
            head.consume(UnsafeRawBufferPointer(rebasing: bytes[start...end]))
            start = end + 1
        }
    }
    _ = head.isSuccess
    if let coding = head.unofferedCoding {
        let name: String
        switch coding {
        case .content(let refused): name = refused
        case .transfer(let refused):
            name = refused
            if refused == "chunked" { fatalError("chunked refused as a transfer coding") }
        }
        if name.isEmpty || !coding.detail.contains("'\(name)'") {
            fatalError("a refused coding without a name: \(coding.detail)")
        }
    }
    // The value parsers on the whole input, whatever the header names.
    let text = String(decoding: input.bytes, as: UTF8.self)
    _ = RetryAfter.seconds(from: text, now: Date(timeIntervalSince1970: 1_700_000_000))
    _ = ContentDigest.sha256Member(of: text)
    _ = RobotsTag.optsOut(text)
    _ = ContentCoding.unoffered(in: text)
    _ = ContentCoding.unofferedTransfer(in: text)
    return 0
}
