import FoundationEssentials
import Glibc
import SDFetchCore

/// `sdfetch stats`: entries, bytes, per-format counts, oldest and newest, failure records.
struct StatsCommand: ArgumentlessCommand {
    static let name = "stats"
    static let usage = "stats [--json]"
    static let summary = "show what the cache holds"
    static let abstract = """
        Show the cache's entries, bytes (a file that entries with identical images share counted \
        once, and the bytes that sharing saves), per-format counts, oldest and newest entry and the number \
        of failed-URL records, and strays: files that are no entry (no record, other bytes, a \
        link, a temporary, a content name no entry shares since a `cp -r`), which `clean` \
        removes. A cache directory that does not exist yet reports zeros.
        """
    static let options: [OptionSpec<StatsCommand>] = [
        OptionSpec("json", help: "print the statistics as one JSON object") { command, _, _ in command.isJSON = true }
    ]

    var cacheDirectory: String?
    var isJSON = false
}

// MARK: - Running

extension StatsCommand {
    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        let stats: CacheStats
        do throws(CacheError) {
            let directory = resolvedCacheDirectory(in: environment)
            stats = try await BlockingWork.run("sdfetch-stats") { () throws(CacheError) in
                try DiskCache.stats(directory: directory)
            }
        } catch {
            return cacheFailure(error)
        }
        FileDescriptorWriter.write(isJSON ? json(stats) : text(stats), to: STDOUT_FILENO)
        return .success
    }

    private func text(_ stats: CacheStats) -> String {
        let formats = stats.formats.sorted {
            $0.value > $1.value || ($0.value == $1.value && $0.key.name < $1.key.name)
        }
        .map { "\($0.key.name) \($0.value)" }.joined(separator: ", ")
        return """
            entries  \(stats.entries)
            bytes    \(stats.bytes) (\(HumanReadable.bytes(stats.bytes)) of entry files and index lines as --max-cache-size counts them, not du's blocks and folders: \(HumanReadable.bytes(stats.imageBytes)) of images, the rest index)
            saved    \(stats.savedBytes) (\(HumanReadable.bytes(stats.savedBytes)) not stored twice: identical images share one file)
            formats  \(formats.isEmpty ? "-" : formats)
            oldest   \(stats.oldest.map(Self.iso8601) ?? "-")
            newest   \(stats.newest.map(Self.iso8601) ?? "-")
            failed   \(stats.failed)
            strays   \(stats.strays)

            """
    }

    private func json(_ stats: CacheStats) -> String {
        var object = JSONLine()
        object.add("entries", stats.entries)
        object.add("bytes", stats.bytes)
        object.add("image_bytes", stats.imageBytes)
        object.add("saved_bytes", stats.savedBytes)
        object.add("formats", counts: Dictionary(uniqueKeysWithValues: stats.formats.map { ($0.key.name, $0.value) }))
        object.add("oldest", stats.oldest.map(Self.iso8601))
        object.add("newest", stats.newest.map(Self.iso8601))
        object.add("failed", stats.failed)
        object.add("strays", stats.strays)
        return object.text
    }

    /// `2026-11-22T23:54:25Z`.
    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
