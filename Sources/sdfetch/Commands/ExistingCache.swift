import Glibc

/// Whether a maintenance command (`clean`, `verify`) has a cache to work on. Those commands
/// never make one: a mistyped `--cache-dir` in a cron line would otherwise get a fresh,
/// empty cache and succeed every night, and a folder of someone's files would get the
/// cache's folders inside it.
enum ExistingCache {
    enum Verdict: Equatable {
        /// A cache (of this format or another, which opening it judges).
        case present
        /// No folder there, or an empty one: nothing to do.
        case absent
        /// A folder holding other things and no cache.
        case foreign
    }

    static func verdict(_ directory: String) -> Verdict {
        guard let folder = opendir(directory) else { return errno == ENOENT ? .absent : .present }
        defer { closedir(folder) }
        var isEmpty = true
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            if name == "FORMAT" || name == "entries" { return .present }
            isEmpty = false
        }
        return isEmpty ? .absent : .foreign
    }

    /// The folders right inside `directory` that hold a cache (a `FORMAT` file), by name,
    /// sorted: a CI artifact unpacked one level off (`shard-0/cache-0`).
    static func cachesOneLevelDown(_ directory: String) -> [String] {
        guard let folder = opendir(directory) else { return [] }
        defer { closedir(folder) }
        var found: [String] = []
        while let entry = readdir(folder), found.count < 100 {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var info = stat()
            let format = directory + "/" + name + "/FORMAT"
            if lstat(format, &info) == 0, info.st_mode & S_IFMT == S_IFREG { found.append(name) }
        }
        return found.sorted()
    }

    /// The status to end `command` with when there is no cache to work on, after saying why;
    /// nil when there is one.
    static func refusal(_ directory: String, command: String, isQuiet: Bool) -> ExitStatus? {
        switch verdict(directory) {
        case .present:
            return nil
        case .absent:
            if !isQuiet {
                StandardError.write("sdfetch: \(command): no cache at \(Escaping.terminal(directory)): nothing to do\n")
            }
            return .success
        case .foreign:
            StandardError.write(
                "sdfetch: \(command): \(Escaping.terminal(directory)) is not an sdfetch cache (no FORMAT file); "
                    + "check --cache-dir\n")
            return .unusableCacheOrInput
        }
    }
}
