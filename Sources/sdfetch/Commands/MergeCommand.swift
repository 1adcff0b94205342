import FoundationEssentials
import Glibc
import SDFetchCore

/// `sdfetch merge SRC_CACHE ...`: fold other cache directories into this one (scale-out).
struct MergeCommand: ParsableCommand {
    static let name = "merge"
    static let usage = "merge [--json] [-q] SRC_CACHE ..."
    static let summary = "add other caches' entries (scale-out)"
    static let abstract = """
        Copy the entries and failed-URL records of each SRC_CACHE into the cache (--cache-dir), \
        where this cache has none for the URL or an older one: the newer stored time wins. Every \
        copied file is checked against its SHA-256, then sniffed and verified as a download would \
        be; an entry over --max-bytes, not the image its record names, or filed under another URL's \
        name is left out, and a time in the future is taken as now. So N sharded jobs' caches become \
        one. A write the cache refuses (a full disk) stops the merge with exit 3.
        """
    static let options: [OptionSpec<MergeCommand>] = [
        OptionSpec("json", help: "one JSON object per source") { command, _, _ in command.isJSON = true },
        OptionSpec(
            "max-bytes", .value("SIZE"), help: "largest entry taken in, K/M/G (as fetch's)",
            default: ValueText.size(FetchOptions().maxBytes)
        ) { command, value, name in
            command.maxBytes = try ValueParsers.size(value, option: name)
        },
        OptionSpec("quiet", short: "q", help: "print nothing (errors still go to standard error)") { command, _, _ in
            command.isQuiet = true
        },
    ]

    var cacheDirectory: String?
    var sources: [String] = []
    var isJSON = false
    var maxBytes = FetchOptions().maxBytes
    var isQuiet = false

    mutating func take(_ argument: String) throws(UsageError) {
        sources.append(argument)
    }

    mutating func validate(in environment: ProcessEnvironment) throws(UsageError) {
        if sources.isEmpty { throw UsageError("merge needs at least one SRC_CACHE directory", command: Self.name) }
    }

    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        let cache: DiskCache
        do throws(CacheError) {
            cache = try DiskCache(directory: resolvedCacheDirectory(in: environment), waits: ShortWaits.cache)
        } catch {
            return cacheFailure(error)
        }
        warnIfUntrusted(cache)
        var status = ExitStatus.success
        for source in sources {
            let path = ProcessEnvironment.absolute(source)
            var info = stat()
            let isFolder = stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
            // A folder without a cache (an empty one, or an artifact one level off) would add
            // nothing and exit 0: refused as a missing one is.
            guard isFolder, ExistingCache.verdict(path) == .present else {
                var hint = ""
                if isFolder, let inside = ExistingCache.cachesOneLevelDown(path).first {
                    let nested = (source.hasSuffix("/") ? source : source + "/") + inside
                    hint = "; a cache sits one level down: did you mean \(Escaping.terminal(nested))?"
                }
                StandardError.write(
                    "sdfetch: merge: \(Escaping.terminal(source)) is not a cache directory (no FORMAT file)\(hint)\n")
                status = ExitStatus(CacheError(path: path, detail: "not a cache directory"))
                continue
            }
            let report: MergeReport
            do throws(CacheError) {
                report = try await BlockingWork.run("sdfetch-merge") { () throws(CacheError) in
                    try cache.merge(from: path, maxBytes: maxBytes)
                }
            } catch {
                status = cacheFailure(error)
                continue
            }
            if report.bad > 0 && status == .success { status = .someFailed }
            if let failure = report.writeFailure {
                // The destination's failure, not the source's entries: exit 3, as for any unusable cache.
                status = cacheFailure(CacheError(path: cache.directory, detail: "merge stopped: \(failure)"))
            }
            guard !isQuiet else { continue }
            if isJSON {
                var object = JSONLine()
                object.add("source", path)
                object.add("merged", report.merged)
                object.add("merged_bytes", report.mergedBytes)
                object.add("kept", report.kept)
                object.add("bad", report.bad)
                object.add("merged_failed", report.mergedFailed)
                FileDescriptorWriter.write(object.text, to: STDOUT_FILENO)
            } else {
                FileDescriptorWriter.write(
                    "sdfetch: merge: \(Escaping.terminal(source)): \(report.merged) entr\(report.merged == 1 ? "y" : "ies") "
                        + "(\(HumanReadable.bytes(report.mergedBytes))) added, \(report.kept) already as new here, "
                        + "\(report.bad) bad, \(report.mergedFailed) failed-URL record\(report.mergedFailed == 1 ? "" : "s")\n",
                    to: STDOUT_FILENO)
            }
        }
        return status
    }
}
