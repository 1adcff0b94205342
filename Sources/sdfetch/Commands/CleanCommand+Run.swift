import Foundation
import SDFetchCore

extension CleanCommand {
    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        let report: CleanReport
        do throws(CacheError) {
            let cache = try DiskCache(directory: resolvedCacheDirectory(in: environment))
            report = try cache.clean(maxAge: maxAge, maxSize: maxSize, dryRun: isDryRun)
        } catch {
            StandardError.write("sdfetch: \(Escaping.terminal(error.description))\n")
            return ExitStatus(error)
        }
        FileDescriptorWriter.write(isJSON ? json(report) : text(report), to: STDOUT_FILENO)
        return .success
    }

    /// `--dry-run` lists the URLs first; then one line saying what was (or would be) removed.
    private func text(_ report: CleanReport) -> String {
        var text = isDryRun ? report.removedURLs.map { Escaping.terminal($0) + "\n" }.joined() : ""
        let verb = isDryRun ? "would remove" : "removed"
        text += "sdfetch: clean: \(verb) \(report.removedEntries) entr\(report.removedEntries == 1 ? "y" : "ies")"
        text += " (\(HumanReadable.bytes(report.removedBytes))), \(report.removedFailed) failed-URL record"
        text += report.removedFailed == 1 ? "" : "s"
        text += ", \(report.removedTemp) temporary file\(report.removedTemp == 1 ? "" : "s")"
        text += "; \(report.entries) entr\(report.entries == 1 ? "y" : "ies") (\(HumanReadable.bytes(report.bytes))) remain\n"
        return text
    }

    private func json(_ report: CleanReport) -> String {
        var object = JSONLine()
        object.add("dry_run", isDryRun)
        object.add("removed_entries", report.removedEntries)
        object.add("removed_bytes", report.removedBytes)
        object.add("removed_failed", report.removedFailed)
        object.add("removed_temp", report.removedTemp)
        object.add("entries", report.entries)
        object.add("bytes", report.bytes)
        object.add("removed_urls", strings: report.removedURLs)
        return object.text
    }
}
