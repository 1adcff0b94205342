import FoundationEssentials
import Glibc
import SDFetchCore

/// What the process inherited and the CLI decides from: variables and which streams are terminals.
///
/// A value so parsing and output decisions are testable without a real terminal.
struct ProcessEnvironment: Sendable {
    var variables: [String: String]
    var isStandardInputTerminal: Bool
    var isStandardErrorTerminal: Bool
    var isStandardOutputTerminal: Bool
    /// Whether a file (or folder) of this name exists, relative to the working directory:
    /// decides whether a command word after shared options names the command or a FILE.
    var pathExists: @Sendable (String) -> Bool = { _ in false }

    static var current: ProcessEnvironment {
        ProcessEnvironment(
            variables: ProcessInfo.processInfo.environment,
            isStandardInputTerminal: isatty(STDIN_FILENO) == 1,
            isStandardErrorTerminal: isatty(STDERR_FILENO) == 1,
            isStandardOutputTerminal: isatty(STDOUT_FILENO) == 1,
            pathExists: { FileManager.default.fileExists(atPath: $0) })
    }

    /// A plain non-terminal environment with `variables` and no files, for tests.
    static func detached(_ variables: [String: String] = [:]) -> ProcessEnvironment {
        ProcessEnvironment(
            variables: variables, isStandardInputTerminal: false, isStandardErrorTerminal: false,
            isStandardOutputTerminal: false)
    }

    /// sdfetch(1) ENVIRONMENT: `SDFETCH_CACHE_DIR`; else `$XDG_CACHE_HOME/sdfetch`; else
    /// `~/.cache/sdfetch`: the library's rule (``DiskCache/defaultDirectory(environment:)``),
    /// so a program sharing the command's cache finds the same folder.
    var defaultCacheDirectory: String { DiskCache.defaultDirectory(environment: variables) }

    /// `path` itself when absolute, else joined to the working directory; `.` components are
    /// dropped so printed paths read `/work/images/a.png`, not `/work/./images/a.png` (`..` is
    /// kept: through a symbolic link it does not mean "the parent in the text").
    static func absolute(_ path: String) -> String {
        let joined = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        guard joined.firstRange(of: "/./") != nil || joined.hasSuffix("/.") else { return joined }
        let parts = joined.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }

    /// `TERM=dumb`: no cursor movement, so no redrawn bar under `--progress auto`, and no colour.
    var isDumbTerminal: Bool { variables["TERM"] == "dumb" }

    /// NO_COLOR (no-color.org): present and non-empty disables colour.
    var forbidsColour: Bool { !(variables["NO_COLOR"] ?? "").isEmpty || isDumbTerminal }
}
