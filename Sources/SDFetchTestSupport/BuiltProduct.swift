import FoundationEssentials

/// Finds executables SwiftPM built next to the running test bundle.
public enum BuiltProduct {
    /// The path of product `name` (e.g. `sdfetch`) in the build directory of this test run.
    public static func path(_ name: String) -> String {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        preconditionFailure("built product \(name) not found near \(CommandLine.arguments[0])")
    }
}
