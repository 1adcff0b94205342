import Glibc

/// A port on 127.0.0.1 whose new connections are never completed, as with a host behind a
/// firewall that drops them: a listener with a backlog of 0 whose one queued connection is
/// never accepted, so the kernel drops every further SYN and a client's connect times out.
public final class BlackholePort: Sendable {
    public let port: Int
    /// The listener, then the connection that fills its queue; closed when the test ends.
    private let descriptors: [Int32]

    public init() throws {
        let bound = try LoopbackSocket.bound(listening: 0)
        let listener = bound.descriptor
        var address = bound.address
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
