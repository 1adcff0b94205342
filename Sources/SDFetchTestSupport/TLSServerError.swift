/// The local TLS server could not be set up.
public struct TLSServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
