import FoundationEssentials
import Glibc
import SDFetchCore

/// `sdfetch verify`: re-hash every cache entry against its recorded SHA-256 and remove bad ones.
struct VerifyCommand: ArgumentlessCommand {
    static let name = "verify"
    static let usage = "verify [--json] [-q]"
    static let summary = "re-check every entry's bytes; remove bad ones"
    static let abstract = """
        Read every cache entry and compare its bytes with the SHA-256 recorded when it was stored; \
        remove entries that differ (edited, truncated, replaced) and files without a record. A file \
        that URLs with identical images share is read once, and a damaged one takes all their \
        entries. Safe \
        while fetches run. Exits 1 when something was removed.
        """
    static let options: [OptionSpec<VerifyCommand>] = [
        OptionSpec("json", help: "one JSON object per removed entry, then a summary object") { command, _, _ in
            command.isJSON = true
        },
        OptionSpec("quiet", short: "q", help: "print nothing; the exit status tells") { command, _, _ in
            command.isQuiet = true
        },
    ]

    var cacheDirectory: String?
    var isJSON = false
    var isQuiet = false

    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        let report: VerifyReport
        let directory = resolvedCacheDirectory(in: environment)
        if let refusal = ExistingCache.refusal(directory, command: Self.name, isQuiet: isQuiet) { return refusal }
        do throws(CacheError) {
            let cache = try DiskCache(directory: directory, waits: ShortWaits.cache)
            warnIfUntrusted(cache)
            report = await BlockingWork.run("sdfetch-verify") { cache.verify() }
        } catch {
            return cacheFailure(error)
        }
        var output = ""
        for removed in report.removed {
            if isJSON {
                var object = JSONLine()
                object.add("url", removed.url)
                object.add("path", removed.path)
                object.add("status", "removed")
                object.add("reason", removed.reason)
                output += object.text
            } else {
                output +=
                    "removed\t\(Escaping.terminal(removed.path))\t\(Escaping.terminal(removed.url ?? "-"))\t\(removed.reason)\n"
            }
        }
        if isJSON {
            var object = JSONLine()
            object.add("summary", true)
            object.add("checked", report.checked)
            object.add("checked_bytes", report.checkedBytes)
            object.add("removed", report.removed.count)
            object.add("restamped", report.restamped)
            output += object.text
        } else {
            output +=
                "sdfetch: verify: checked \(report.checked) entr\(report.checked == 1 ? "y" : "ies") "
                + "(\(HumanReadable.bytes(report.checkedBytes)) of images), removed \(report.removed.count)\n"
        }
        if !isQuiet { FileDescriptorWriter.write(output, to: STDOUT_FILENO) }
        return report.removed.isEmpty ? .success : .someFailed
    }
}
