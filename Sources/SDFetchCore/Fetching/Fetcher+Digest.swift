import Crypto
import FoundationEssentials

extension Fetcher {
    /// `hash-mismatch` when `body` is not what the server's `Content-Digest` or `Repr-Digest`
    /// `sha-256` (base64, `declared`) says; nil when it is, or when the digest is unreadable
    /// (a malformed header proves nothing about the bytes).
    static func digestMismatch(_ body: [UInt8], declared: String) -> FetchFailure? {
        guard let expected = Data(base64Encoded: declared), expected.count == SHA256.byteCount else { return nil }
        guard Data(SHA256.hash(data: body)) != expected else { return nil }
        return FetchFailure(.hashMismatch, "the body's SHA-256 differs from the one the server declared (Content-Digest)")
    }
}
