import FoundationEssentials
import Glibc
import SDFetchCore

/// URLs typed on the command line (sdfetch(1) DESCRIPTION), and `-o FILE` for a single one.
enum URLArgument {
    /// The name URL arguments are reported under: `arguments:2` is the second.
    static let sourceName = "arguments"

    /// Whether `argument` is a URL to fetch: it starts `http://` or `https://` (any case) and
    /// parses as a URL, as curl reads it, whatever the working folder holds (the path
    /// `http:/host/x` is spelt `http://host/x` too); or, not parsing, names no existing file
    /// (it is then reported `invalid`). A file named like a URL is read as `./http:...`.
    static func isURL(_ argument: String) -> Bool {
        let lowered = argument.prefix(8).lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { return false }
        return (try? URLKey(parsing: argument)) != nil || access(argument, F_OK) != 0
    }

    /// Whether `-o` names a file rather than a folder: the input is exactly one URL
    /// argument, and the name neither ends in `/`, nor is an existing directory, nor starts
    /// with `.` (curl's `-o FILE`; `-o DIR/` keeps the folder meaning).
    static func namesOutputFile(_ output: String, sources: [InputSource]) -> Bool {
        guard isSingleURL(sources), !output.hasSuffix("/"), !fileName(of: output).hasPrefix(".") else { return false }
        var info = stat()
        return !(stat(output, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR)
    }

    /// Whether the input is exactly one URL argument.
    static func isSingleURL(_ sources: [InputSource]) -> Bool {
        guard sources.count == 1, case .list(let name, let urls) = sources[0] else { return false }
        return name == sourceName && urls.count == 1
    }

    /// The folder `-o FILE` writes into (`.` for a bare name).
    static func folder(of file: String) -> String {
        guard let slash = file.lastIndex(of: "/") else { return "." }
        return slash == file.startIndex ? "/" : String(file[..<slash])
    }

    /// The name `-o FILE` writes.
    static func fileName(of file: String) -> String {
        file.lastIndex(of: "/").map { String(file[file.index(after: $0)...]) } ?? file
    }
}
