import FoundationEssentials

extension Fetcher {
    /// `hash-mismatch` when `body` is not what the server's `Content-Digest` or `Repr-Digest`
    /// `sha-256` (base64, `declared`) says; nil when it is, or when the digest is unreadable
    /// (a malformed header proves nothing about the bytes).
    static func digestMismatch(_ body: [UInt8], declared: String) -> FetchFailure? {
        guard let expected = Data(base64Encoded: declared), expected.count == SHA256.byteCount else { return nil }
        guard Data(SHA256.hash(data: body)) != expected else { return nil }
        return FetchFailure(
            .hashMismatch, "the body's SHA-256 differs from the one the server declared (Content-Digest)")
    }

    /// `hash-mismatch` for bytes whose SHA-256 (`actual`) is not the row's pinned one;
    /// `cached`: the bytes are the cache's (under `--offline`, nothing else is tried).
    static func pinMismatch(_ actual: String, _ pin: String, cached: Bool) -> FetchFailure {
        let whose = cached ? "the cached bytes' SHA-256" : "the body's SHA-256"
        let after = cached ? " (--offline: not fetched again)" : ""
        return FetchFailure(
            .hashMismatch, "\(whose) \(actual.prefix(12))... is not the pinned \(pin.prefix(12))...\(after)")
    }

    /// SHA-256 of `body` as 64 lower-case hex digits, as entries record it.
    static func sha256Hex(_ body: [UInt8]) -> String {
        body.withUnsafeBytes(EntryFile.sha256(of:))
    }
}
