import SDFetchCore

extension FetchResult {
    /// A success whose delivery failed: `failed` with `failure`, no path.
    mutating func failDelivery(_ failure: FetchFailure, entryWasRemoved: Bool = false) {
        status = .failed
        self.failure = failure
        path = nil
        self.entryWasRemoved = entryWasRemoved
    }
}
