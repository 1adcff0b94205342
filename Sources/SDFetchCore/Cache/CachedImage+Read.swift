import Glibc

extension CachedImage {
    /// The whole image, read from the start (a resized copy decodes it in memory).
    public func readAll() throws(Unreadable) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int(self.bytes))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress! + filled, raw.count - filled, off_t(filled))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw Unreadable(detail: "cannot read a cache file: \(count == 0 ? "it ended early" : errnoText())")
            }
            filled += count
        }
        return bytes
    }
}
