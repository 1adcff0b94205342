import Foundation

/// A fresh directory under the system temp dir, removed with everything in it when the
/// current test ends, however it ends (a failed `#require`, a thrown error, a time limit):
/// it registers its removal with the test's ``TestScope`` as it is made, so a suite makes
/// one in a stored property and never removes it by hand. Made outside a ``CleansUp``
/// scope it stops the test run (see ``TestScope/onExit(_:)``): give the suite `.cleansUp`.
///
/// Removed after everything the test made later (the scope closes newest first), so an
/// engine or a child process still writing into it has been stopped by then.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "test") {
        let base = NSTemporaryDirectory() + "sdfetch-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        self.path = base
        TestScope.onExit { try? FileManager.default.removeItem(atPath: base) }
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
}
