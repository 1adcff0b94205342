import Glibc

/// A port on 127.0.0.1 that refuses every connection (`ECONNREFUSED`), as a host with
/// nothing listening there: a socket bound to it that never listens. Unlike the port of a
/// server that was shut down, it stays bound for the test, so no other test's server can
/// take it meanwhile.
public final class RefusingPort: Sendable {
    public let port: Int

    public init() throws {
        let (descriptor, address) = try LoopbackSocket.bound()
        port = Int(UInt16(bigEndian: address.sin_port))
        TestScope.onExit { close(descriptor) }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
}
