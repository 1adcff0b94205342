import Glibc

extension OutputPlacer {
    /// The bytes and path of the regular file at `relativePath` in DIR, for a resized copy's
    /// look at what a previous run left there; nil when there is none, it is a link or not a
    /// regular file, it is over `limit` bytes, or it cannot be read (then it is made again).
    func existingFile(at relativePath: String, limit: Int) -> (bytes: [UInt8], path: String)? {
        try? inFolder(of: relativePath) { name, parent, target throws(OutputError) -> (bytes: [UInt8], path: String)? in
            let file = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard file >= 0 else { return nil }
            defer { close(file) }
            var info = stat()
            guard fstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= limit else { return nil }
            var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
            var filled = 0
            while filled < bytes.count {
                let count = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress! + filled, $0.count - filled) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return nil }
                filled += count
            }
            return (bytes, target)
        } ?? nil
    }
}
