internal import CCurl

/// The content codings a request offers, and the check that a response uses no other, as
/// a content coding or as a transfer coding.
///
/// Offered only where the decoder's memory is bounded whatever the body declares: gzip and
/// deflate (a 32 KiB window) and brotli (at most 16 MiB), each when this libcurl decodes
/// it. Not zstd: a frame may declare a 128 MiB window, which libcurl's decoder accepts, so
/// a 1 KB body cost about 45 MB per transfer (<doc:Security>). libcurl decodes every
/// coding it was built with, asked for or not, so a response naming any other coding is
/// refused from its header, before a byte of its body is decoded.
///
/// libcurl builds the same decoders from `Transfer-Encoding` (`zstd, chunked` reopened the
/// zstd hole). sdfetch sends no `TE`, so a server may use `chunked` alone there (RFC 9112,
/// section 6.1): any other transfer coding is refused the same way.
enum ContentCoding {
    /// The `Accept-Encoding` value (`gzip, deflate, br`), or nil when libcurl decodes none.
    static let offered: String? = {
        // CURL_VERSION_LIBZ (1 << 3) and CURL_VERSION_BROTLI (1 << 23): macros Swift does not import.
        let features = curl_version_info(CURLVERSION_TENTH).map { Int($0.pointee.features) } ?? 0
        var names: [String] = []
        if features & (1 << 3) != 0 { names += ["gzip", "deflate"] }
        if features & (1 << 23) != 0 { names.append("br") }
        return names.isEmpty ? nil : names.joined(separator: ", ")
    }()

    /// The names a response may use: the offered ones, gzip's old alias, and `identity`.
    private static let accepted: Set<String> = {
        var names: Set<String> = ["identity"]
        for name in (offered ?? "").split(separator: ",") { names.insert(String(name.trimmingBlanks())) }
        if names.contains("gzip") { names.insert("x-gzip") }
        return names
    }()

    /// The first coding of a `Content-Encoding` value that was not offered (`zstd`), or nil.
    static func unoffered(in value: String) -> String? {
        firstCoding(in: value) { !accepted.contains($0) }
    }

    /// The first coding of a `Transfer-Encoding` value other than `chunked`, or nil.
    static func unofferedTransfer(in value: String) -> String? {
        // A parameter (`gzip;q=1`) is part of the coding's name here: refused all the same.
        firstCoding(in: value) { $0 != "chunked" }
    }

    private static func firstCoding(in value: String, where isRefused: (String) -> Bool) -> String? {
        for coding in value.split(separator: ",") {
            let name = coding.trimmingBlanks().lowercased()
            if !name.isEmpty, isRefused(name) { return String(name.prefix(40)) }
        }
        return nil
    }
}
