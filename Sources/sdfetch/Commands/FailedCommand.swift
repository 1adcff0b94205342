import FoundationEssentials
import Glibc
import SDFetchCore

/// `sdfetch failed list | clear | remove URL ...`: the persistent failed-URL blacklist.
struct FailedCommand: ParsableCommand {
    enum Action: String, CaseIterable, Sendable {
        case list, clear, remove
    }

    static let name = "failed"
    static let usage = "failed list | clear | remove URL ..."
    static let summary = "list or forget failed-URL records"
    static var argumentWords: [String] { Action.allCases.map(\.rawValue) }
    static let abstract = """
        List the failed-URL records (URL, kind, time, detail; tab-separated), clear them all (and \
        the hosts remembered as down), or remove the records of the given URLs so the next fetch \
        tries them again.
        """
    static let options: [OptionSpec<FailedCommand>] = [
        OptionSpec("json", help: "list: one JSON object per record") { command, _, _ in command.isJSON = true }
    ]

    var cacheDirectory: String?
    var action: Action?
    var keys: [URLKey] = []
    var isJSON = false

    mutating func take(_ argument: String) throws(UsageError) {
        guard let action else {
            action = try ValueParsers.choice(argument, option: "failed", of: Action.self)
            return
        }
        guard action == .remove else {
            throw Self.unexpectedArgument(argument, after: "failed \(action.rawValue)")
        }
        do throws(InvalidURL) {
            keys.append(try URLKey(parsing: argument))
        } catch {
            throw UsageError("'\(Escaping.terminal(argument))' is not a URL: \(error.reason)", command: Self.name)
        }
    }

    mutating func validate(in environment: ProcessEnvironment) throws(UsageError) {
        guard let action else { throw UsageError("failed needs an action: list, clear or remove", command: Self.name) }
        if action == .remove, keys.isEmpty {
            throw UsageError("failed remove needs at least one URL", command: Self.name)
        }
    }
}

// MARK: - Running

extension FailedCommand {
    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        let directory = resolvedCacheDirectory(in: environment)
        let blacklist: FailureBlacklist
        let hostMemory: HostDownMemory
        do throws(CacheError) {
            // Listing must not create anything: an absent cache lists nothing.
            let cache = try DiskCache(directory: directory, readOnly: action == .list, waits: ShortWaits.cache)
            blacklist = FailureBlacklist(cache: cache)
            hostMemory = HostDownMemory(cache: cache)
        } catch {
            return cacheFailure(error)
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
            // Hosts found down go too: a cleared blacklist means "try everything again".
            let hosts = hostMemory.clear()
            if hosts > 0 { output += "sdfetch: removed \(hosts) host-down record\(hosts == 1 ? "" : "s")\n" }
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
