/// Why an input line is not a usable URL; `reason` is lower-case and names the problem.
public struct InvalidURL: Error, Sendable, Equatable {
    public let reason: String
}
