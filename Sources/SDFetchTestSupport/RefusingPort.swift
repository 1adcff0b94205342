import Glibc

/// A port on 127.0.0.1 that refuses every connection (`ECONNREFUSED`), as a host with
/// nothing listening there: a socket bound to it that never listens. Unlike the port of a
/// server that was shut down, it stays bound for the test, so no other test's server can
/// take it meanwhile.
public final class RefusingPort: Sendable {
    public let port: Int

    public init() throws {
        // No SO_REUSEADDR: a server binding with it cannot share the port either.
        let bound = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard bound >= 0 else { throw TLSServerError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let isBound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(bound, socketAddress, length) == 0 && getsockname(bound, socketAddress, &length) == 0
            }
        }
        guard isBound else {
            close(bound)
            throw TLSServerError("bind failed")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        TestScope.onExit { [bound] in close(bound) }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
}
