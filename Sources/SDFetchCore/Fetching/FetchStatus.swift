/// How one unique URL ended (<doc:Fetching#Results>); the raw values are the words
/// printed.
public enum FetchStatus: String, Sendable, CaseIterable {
    case downloaded
    case cached
    case revalidated
    case failed
    case skipped
    case invalid

    /// Whether this status lets the run exit 0.
    public var isSuccess: Bool {
        switch self {
        case .downloaded, .cached, .revalidated: true
        case .failed, .skipped, .invalid: false
        }
    }
}
