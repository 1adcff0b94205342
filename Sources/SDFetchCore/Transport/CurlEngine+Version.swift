internal import CCurl

extension CurlEngine {
    /// The libcurl this process runs with (not the headers it was built against), with its
    /// TLS library: `8.5.0 (OpenSSL/3.0.11)`.
    static var libraryVersion: String {
        // CURLVERSION_NOW is a macro alias Swift does not import; 7.88's value is the tenth.
        guard let info = curl_version_info(CURLVERSION_TENTH) else { return "unknown" }
        let version = info.pointee.version.map { String(cString: $0) } ?? "unknown"
        guard let tls = info.pointee.ssl_version else { return version }
        return "\(version) (\(String(cString: tls)))"
    }
}
