import SDFetchCore

/// `sdfetch failed list | clear | remove URL ...`: the persistent failed-URL blacklist.
struct FailedCommand: ParsableCommand {
    enum Action: String, CaseIterable, Sendable {
        case list, clear, remove
    }

    static let name = "failed"
    static let usage = "failed list | clear | remove URL ..."
    static let summary = "list or forget failed-URL records"
    static let abstract = """
        List the failed-URL records (URL, kind, time, detail; tab-separated), clear them all, or \
        remove the records of the given URLs so the next fetch tries them again.
        """
    static let options: [OptionSpec<FailedCommand>] = [
        OptionSpec("json", help: "list: one JSON object per record") { c, _, _ in c.isJSON = true }
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
            throw UsageError("failed \(action.rawValue) takes no arguments, got '\(Escaping.terminal(argument))'", command: Self.name)
        }
        do throws(InvalidURL) {
            keys.append(try URLKey(parsing: argument))
        } catch {
            throw UsageError("'\(Escaping.terminal(argument))' is not a URL: \(error.reason)", command: Self.name)
        }
    }

    mutating func validate(in environment: ProcessEnvironment) throws(UsageError) {
        guard let action else { throw UsageError("failed needs an action: list, clear or remove", command: Self.name) }
        if action == .remove, keys.isEmpty { throw UsageError("failed remove needs at least one URL", command: Self.name) }
    }
}
