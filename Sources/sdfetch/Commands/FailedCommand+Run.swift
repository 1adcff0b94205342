import Foundation
import SDFetchCore

extension FailedCommand {
    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        let directory = resolvedCacheDirectory(in: environment)
        // Listing an absent cache lists nothing; it must not create the directory.
        if action == .list, !FileManager.default.fileExists(atPath: directory) { return .success }
        let blacklist: FailureBlacklist
        do throws(CacheError) {
            blacklist = FailureBlacklist(cache: try DiskCache(directory: directory))
        } catch {
            StandardError.write("sdfetch: \(Escaping.terminal(error.description))\n")
            return ExitStatus(error)
        }
        var output = ""
        switch action {
        case .list?:
            for record in blacklist.list().sorted(by: { $0.recordedAt < $1.recordedAt }) {
                output += isJSON ? json(record) : text(record)
            }
        case .clear?:
            let count = blacklist.clear()
            output = "sdfetch: removed \(count) failed-URL record\(count == 1 ? "" : "s")\n"
        case .remove?:
            let count = blacklist.remove(keys)
            output = "sdfetch: removed \(count) failed-URL record\(count == 1 ? "" : "s")\n"
        case nil:
            preconditionFailure("validate() requires an action")
        }
        FileDescriptorWriter.write(output, to: STDOUT_FILENO)
        return .success
    }

    /// `URL<TAB>KIND<TAB>TIME<TAB>DETAIL`.
    private func text(_ record: FailureRecord) -> String {
        [record.url, record.kind.label, StatsCommand.iso8601(record.recordedAt), record.detail]
            .map { Escaping.terminal($0) }.joined(separator: "\t") + "\n"
    }

    private func json(_ record: FailureRecord) -> String {
        var object = JSONLine()
        object.add("url", record.url)
        object.add("error", record.kind.label)
        object.add("detail", record.detail)
        object.add("recorded_at", StatsCommand.iso8601(record.recordedAt))
        return object.text
    }
}
