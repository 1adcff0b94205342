import Foundation

/// Compresses files with the system's `gzip`, as a user makes a `list.csv.gz`.
public enum Gzip {
    /// Replaces `path` with `path.gz` (`keep`: leaves `path` too); throws when gzip fails.
    public static func compress(_ path: String, keep: Bool = false) throws {
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = (keep ? ["-k"] : []) + ["-f", path]
        try gzip.run()
        gzip.waitUntilExit()
        guard gzip.terminationStatus == 0 else { throw GzipError(status: gzip.terminationStatus) }
    }
}

/// `gzip` exited with `status`.
public struct GzipError: Error {
    public let status: Int32
}
