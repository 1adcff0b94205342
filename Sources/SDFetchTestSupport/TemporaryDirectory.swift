import Foundation

/// A fresh directory under the system temp dir, removed by ``remove()``.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "test") {
        let base = NSTemporaryDirectory() + "sdfetch-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        self.path = base
    }

    /// `path` + `/` + `name`.
    public func appending(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` inside the directory and returns its path.
    @discardableResult
    public func write(_ text: String, to name: String) -> String {
        let file = appending(name)
        _ = FileManager.default.createFile(atPath: file, contents: Data(text.utf8))
        return file
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
