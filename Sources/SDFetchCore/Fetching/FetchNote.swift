/// One line of `-v`: something that happened to a URL on its way, not its result.
public struct FetchNote: Sendable, Equatable {
    /// The URL as spelled in the input.
    public let url: String
    /// Lower-case, no final period: "followed 2 redirects to https://...".
    public let message: String

    public init(url: String, message: String) {
        // Notes quote URLs (a redirect's target, a Location with userinfo): masked here.
        self.url = Redaction.masked(url)
        self.message = Redaction.masked(message)
    }
}
