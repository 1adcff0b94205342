/// How the network step ended: the three ways the rest of a URL's way can go.
enum NetworkOutcome {
    /// A `2xx` body, to verify and store.
    case body(TransferResponse)
    /// `304 Not Modified` to a conditional request: the stale entry is renewed.
    case notModified(TransferResponse)
    /// Anything else, with the failure it reports (the response keeps the HTTP status).
    case failed(TransferResponse, FetchFailure)
}
