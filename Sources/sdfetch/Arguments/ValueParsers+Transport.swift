import FoundationEssentials
import Glibc

/// Values of the transport options: rates, proxies, files.
extension ValueParsers {
    /// `--limit-rate`: a size per second (`500K`, `2M`, optionally followed by `/s`), more than 0.
    static func rate(_ text: String, option: String) throws(UsageError) -> Int64 {
        var body = Substring(text)
        if body.lowercased().hasSuffix("/s") { body = body.dropLast(2) }
        let bytes: Int64
        do throws(UsageError) {
            bytes = try size(String(body), option: option)
        } catch {
            throw UsageError(
                "option \(option): '\(Escaping.terminal(text))' is not a rate (bytes per second, or a number with K, M or G, e.g. 500K)"
            )
        }
        guard bytes > 0 else { throw UsageError("option \(option): the rate must be more than 0") }
        return bytes
    }

    /// `--proxy`: a URL with a host, as curl takes it (`http://`, `https://`, `socks5h://`, or a bare `host:port`).
    static func proxy(_ text: String, option: String) throws(UsageError) -> String {
        guard !text.isEmpty, !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw UsageError(
                "option \(option): '\(Escaping.terminal(text))' is not a proxy URL (e.g. http://proxy:3128)")
        }
        return text
    }

    /// A file that must be readable now (`--cacert`): a missing bundle is a usage error, not
    /// a `tls` failure on every URL. Only a regular file: curl would block forever opening a
    /// FIFO (and read a device without end).
    static func readableFile(_ text: String, option: String) throws(UsageError) -> String {
        guard !text.isEmpty, access(text, R_OK) == 0 else {
            throw UsageError("option \(option): cannot read '\(Escaping.terminal(text))'")
        }
        var info = stat()
        guard stat(text, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw UsageError("option \(option): '\(Escaping.terminal(text))' is not a regular file")
        }
        return text
    }
}
