import FoundationEssentials
import Glibc
import SDFetchCore

/// `sdfetch path URL ...`: the cache file of each URL that has an entry, fresh or stale.
///
/// Never creates the cache directory: asking where something is must not change anything.
struct PathCommand: ParsableCommand {
    static let name = "path"
    static let usage = "path URL ..."
    static let summary = "print the cache file of each URL"
    static let abstract = """
        Print the cache file of each URL, one per line, for every URL with an entry (fresh or \
        stale). Exits 1 when some URL has none.
        """
    static let options: [OptionSpec<PathCommand>] = []

    var cacheDirectory: String?
    var keys: [URLKey] = []

    mutating func take(_ argument: String) throws(UsageError) {
        do throws(InvalidURL) {
            keys.append(try URLKey(parsing: argument))
        } catch {
            throw UsageError("'\(Escaping.terminal(argument))' is not a URL: \(error.reason)", command: Self.name)
        }
    }

    mutating func validate(in environment: ProcessEnvironment) throws(UsageError) {
        if keys.isEmpty { throw UsageError("path needs at least one URL", command: Self.name) }
    }

    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        let directory = resolvedCacheDirectory(in: environment)
        var output = ""
        var allFound = true
        let cache: DiskCache
        do throws(CacheError) {
            // Asking where something is must not change anything: read only.
            cache = try DiskCache(directory: directory, readOnly: true, waits: ShortWaits.cache)
        } catch {
            return cacheFailure(error)
        }
        warnIfUntrusted(cache)
        for key in keys {
            if cache.entry(for: key) != nil {
                output += Escaping.terminal(cache.bodyPath(for: key)) + "\n"
            } else {
                allFound = false
                StandardError.write("sdfetch: no cache entry for \(Escaping.terminal(key.redacted))\n")
            }
        }
        FileDescriptorWriter.write(output, to: STDOUT_FILENO)
        return ExitStatus(allFound: allFound)
    }
}
