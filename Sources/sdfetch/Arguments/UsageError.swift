import SDFetchCore

/// A bad command line: the message names the option or argument at fault (exit 2).
///
/// `command` says whose `--help` the "Try ..." hint points to.
struct UsageError: Error, Equatable {
    let message: String
    var command: String?

    init(_ message: String, command: String? = nil) {
        // Usage errors quote what was typed (a `--proxy` with its password): masked here.
        self.message = Redaction.masked(message)
        self.command = command
    }

    /// The hint printed after the message.
    var hint: String {
        if let command, command != FetchCommand.name { return "Try 'sdfetch \(command) --help' for more information." }
        return "Try 'sdfetch --help' for more information."
    }
}
