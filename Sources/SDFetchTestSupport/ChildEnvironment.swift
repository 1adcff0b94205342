import FoundationEssentials
import Glibc

/// The environment of a child process a test starts with only the variables it names.
///
/// Tests give `sdfetch` a cleaned environment (a `HOME` of their own, a `TERM`), so nothing
/// from the developer's shell leaks in. The sanitizers' settings must still reach it: a
/// child built with `--sanitize=thread` (`make tsan`) without `TSAN_OPTIONS` runs without
/// the suppressions, and TSan's exit status 66 for a report would stand in for its own.
public enum ChildEnvironment {
    /// Variables passed on from this process when set: the sanitizer runtimes' options.
    static let inherited = ["TSAN_OPTIONS", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"]

    /// `variables` plus this process's sanitizer settings (`variables` win).
    public static func with(_ variables: [String: String]) -> [String: String] {
        var environment = variables
        let current = ProcessInfo.processInfo.environment
        for name in inherited where environment[name] == nil {
            if let value = current[name] { environment[name] = value }
        }
        return environment
    }
}
