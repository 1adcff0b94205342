import Glibc

/// A port on 127.0.0.1 whose new connections are never completed, as with a host behind a
/// firewall that drops them: a listener with a backlog of 0 whose one queued connection is
/// never accepted, so the kernel drops every further SYN and a client's connect times out.
public final class BlackholePort: Sendable {
    public let port: Int
    /// The listener, then the connection that fills its queue; closed when the test ends.
    private let descriptors: [Int32]

    public init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw TLSServerError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(listener, socketAddress, length) == 0 && listen(listener, 0) == 0
                    && getsockname(listener, socketAddress, &length) == 0
            }
        }
        guard listening else {
            close(listener)
            throw TLSServerError("bind or listen failed")
        }
        // Fills the queue of one; its handshake completes in the kernel, never accepted.
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let connected = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                connect(filler, socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard filler >= 0, connected else {
            close(listener)
            if filler >= 0 { close(filler) }
            throw TLSServerError("cannot fill the listener's queue")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        descriptors = [listener, filler]
        TestScope.onExit { [descriptors] in for descriptor in descriptors { close(descriptor) } }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
}
