internal import CCrypto

/// SHA-256 from the system's OpenSSL libcrypto, the library libcurl already links: URL
/// keys (``KeyDigest``), entry files' recorded digests and the servers' `Content-Digest`
/// checks all hash with it, and libcrypto uses the CPU's SHA instructions where present.
///
/// A value type: the context is a plain C struct held inline, so a hasher copies like any
/// struct and a one-shot hash allocates nothing.
package struct SHA256: Sendable {
    package static let byteCount = 32

    /// The 32 bytes of a finished hash.
    package struct Digest: Sequence, Sendable {
        fileprivate var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try Swift.withUnsafeBytes(of: bytes, body)
        }

        package func makeIterator() -> IndexingIterator<[UInt8]> {
            withUnsafeBytes { Array($0) }.makeIterator()
        }
    }

    private var context = SHA256_CTX()

    package init() {
        SHA256_Init(&context)
    }

    package mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        guard let base = bufferPointer.baseAddress, !bufferPointer.isEmpty else { return }
        SHA256_Update(&context, base, bufferPointer.count)
    }

    package func finalize() -> Digest {
        var finished = context
        var digest = Digest()
        Swift.withUnsafeMutableBytes(of: &digest.bytes) { out in
            _ = SHA256_Final(out.baseAddress!.assumingMemoryBound(to: UInt8.self), &finished)
        }
        return digest
    }

    package static func hash(data: UnsafeRawBufferPointer) -> Digest {
        var hasher = SHA256()
        hasher.update(bufferPointer: data)
        return hasher.finalize()
    }

    package static func hash(data: some Sequence<UInt8>) -> Digest {
        var hasher = SHA256()
        let handled: Void? = data.withContiguousStorageIfAvailable {
            hasher.update(bufferPointer: UnsafeRawBufferPointer($0))
        }
        if handled == nil {
            let bytes = Array(data)
            bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        }
        return hasher.finalize()
    }
}
