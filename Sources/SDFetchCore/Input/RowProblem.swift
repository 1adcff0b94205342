/// Why a row (or a table's header) is unusable: lower case, no final period, for the
/// `invalid` line or the unreadable-input message.
struct RowProblem: Error {
    let reason: String

    init(_ reason: String) {
        self.reason = reason
    }
}
