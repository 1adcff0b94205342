import FoundationEssentials
import Glibc
import SDFetchCore

extension InputSource {
    /// Whether this is a regular file (or standard input redirected from one) larger than `bytes`.
    func isLargeFile(over bytes: Int) -> Bool {
        var info = stat()
        let found: Bool
        switch self {
        case .file(let path): found = stat(path, &info) == 0
        case .standardInput: found = fstat(STDIN_FILENO, &info) == 0
        case .list(_, let lines): return lines.count > bytes / 64  // a line of a list is about 64 bytes
        }
        return found && (info.st_mode & S_IFMT) == S_IFREG && Int(info.st_size) > bytes
    }
}
