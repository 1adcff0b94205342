/// A bad command line: the message names the option (exit 2).
struct UsageError: Error, Equatable {
    let message: String

    init(_ message: String) {
        self.message = message
    }
}
