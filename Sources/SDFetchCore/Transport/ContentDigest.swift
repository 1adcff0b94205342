/// The digest a server declares for its bytes (RFC 9530 `Content-Digest`, `Repr-Digest`).
enum ContentDigest {
    /// The base64 text of the `sha-256` member of a `Content-Digest` or `Repr-Digest`
    /// dictionary (`sha-256=:BASE64:, sha-512=:...:`), or nil when it has none.
    static func sha256Member(of value: String) -> String? {
        for member in value.split(separator: ",") {
            let parts = member.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingBlanks().lowercased() == "sha-256" else { continue }
            let bytes = parts[1].trimmingBlanks()
            guard bytes.count >= 2, bytes.first == ":", bytes.last == ":" else { return nil }
            return String(bytes.dropFirst().dropLast())
        }
        return nil
    }
}
