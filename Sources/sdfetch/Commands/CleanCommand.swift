import FoundationEssentials
import Glibc
import SDFetchCore

/// `sdfetch clean`: drop expired entries, expired failure records and stray temporary files, then trim to size.
struct CleanCommand: ArgumentlessCommand {
    static let name = "clean"
    static let usage = "clean [--max-age DUR] [--max-size SIZE] [--dry-run] [--json] [-q]"
    static let summary = "remove expired entries and trim the cache"
    static let abstract = """
        Remove expired cache entries, expired failed-URL records and stray temporary files, then \
        trim the cache to --max-size, least recently used first. A file that URLs with identical \
        images share counts once and goes with the last of them. Safe while fetches run. Says what it \
        removed, and nothing when it removed nothing. A cache directory of sdfetch's previous on-disk \
        format (1) is removed.
        """
    static let options: [OptionSpec<CleanCommand>] = [
        OptionSpec(
            "max-age", .value("DUR"), help: "entries and records older than this expire",
            default: ValueText.duration(FetchOptions().maxAge)
        ) {
            command, value, name in
            command.maxAge = try ValueParsers.duration(value, option: name)
        },
        OptionSpec("max-size", .value("SIZE"), help: "then trim the cache to this size, K/M/G (default: no trim)") {
            command, value, name in
            command.maxSize = try ValueParsers.size(value, option: name)
        },
        OptionSpec("dry-run", help: "only list what would be removed") { command, _, _ in command.isDryRun = true },
        OptionSpec("json", help: "print the report as one JSON object, with each step's count and time") {
            command, _, _ in command.isJSON = true
        },
        OptionSpec("quiet", short: "q", help: "print nothing (errors still go to standard error)") { command, _, _ in
            command.isQuiet = true
        },
    ]

    var cacheDirectory: String?
    var maxAge: Duration = FetchOptions().maxAge
    var maxSize: Int64?
    var isDryRun = false
    var isJSON = false
    var isQuiet = false
}

// MARK: - Running

extension CleanCommand {
    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        let report: CleanReport
        let directory = resolvedCacheDirectory(in: environment)
        if let refusal = ExistingCache.refusal(directory, command: Self.name, isQuiet: isQuiet) { return refusal }
        var removedFormat = 0
        do throws(CacheError) {
            removedFormat = try DiskCache.removeFormatOne(directory: directory, dryRun: isDryRun)
            if isDryRun && removedFormat > 0 {
                // The cache cannot be opened before the old format is gone: say what would go.
                if !isQuiet {
                    FileDescriptorWriter.write(
                        "sdfetch: clean: would remove a cache of the previous on-disk format (1) from "
                            + "\(Escaping.terminal(directory)): \(CacheFormat.formatOneNames.joined(separator: " "))\n",
                        to: STDOUT_FILENO)
                }
                return .success
            }
            let cache = try DiskCache(directory: directory, waits: ShortWaits.cache)
            // Only the dry-run listing and JSON show the URLs; reading them costs a read per entry.
            let (maxAge, maxSize, isDryRun, listing) = (maxAge, maxSize, isDryRun, isDryRun || isJSON)
            report = try await BlockingWork.run("sdfetch-clean") { () throws(CacheError) in
                try cache.clean(maxAge: maxAge, maxSize: maxSize, dryRun: isDryRun, listing: listing)
            }
        } catch {
            return cacheFailure(error)
        }
        if removedFormat > 0 && !isQuiet {
            StandardError.write(
                "sdfetch: clean: removed a cache of the previous on-disk format (1) from \(Escaping.terminal(directory))\n"
            )
        }
        let removedSomething =
            report.removedEntries + report.removedFailed + report.removedHosts + report.removedTemp > 0
        // Said when something was removed (or would be); cron mails whatever a job prints, and
        // -q silences the rest (README, "In CI and cron").
        if isJSON {
            FileDescriptorWriter.write(json(report), to: STDOUT_FILENO)
        } else if !isQuiet && (removedSomething || isDryRun) {
            FileDescriptorWriter.write(text(report), to: STDOUT_FILENO)
        }
        return .success
    }

    /// `--dry-run` lists the URLs first; then one line saying what was (or would be) removed.
    private func text(_ report: CleanReport) -> String {
        var text = isDryRun ? report.removedURLs.map { Escaping.terminal($0) + "\n" }.joined() : ""
        let verb = isDryRun ? "would remove" : "removed"
        text += "sdfetch: clean: \(verb) \(report.removedEntries) entr\(report.removedEntries == 1 ? "y" : "ies")"
        text += " (\(HumanReadable.bytes(report.removedBytes)) on disk), \(report.removedFailed) failed-URL record"
        text += report.removedFailed == 1 ? "" : "s"
        if report.removedHosts > 0 {
            text += ", \(report.removedHosts) host-down record\(report.removedHosts == 1 ? "" : "s")"
        }
        text += ", \(report.removedTemp) temporary file\(report.removedTemp == 1 ? "" : "s")"
        text +=
            "; \(report.entries) entr\(report.entries == 1 ? "y" : "ies") (\(HumanReadable.bytes(report.bytes)) on disk) remain\n"
        return text
    }

    private func json(_ report: CleanReport) -> String {
        var object = JSONLine()
        object.add("dry_run", isDryRun)
        object.add("removed_entries", report.removedEntries)
        object.add("removed_bytes", report.removedBytes)
        object.add("removed_failed", report.removedFailed)
        object.add("removed_hosts", report.removedHosts)
        object.add("removed_temp", report.removedTemp)
        object.add("entries", report.entries)
        object.add("bytes", report.bytes)
        object.add("removed_urls", strings: report.removedURLs)
        object.add(
            "steps",
            objects: report.steps.map { step in
                var fields = JSONLine()
                fields.add("name", step.name)
                fields.add("removed", step.removed)
                fields.add("seconds", step.seconds)
                return fields
            })
        return object.text
    }
}
