import Glibc

/// A TCP socket bound to a port of 127.0.0.1 that the kernel picks: the base of the test
/// hosts that behave at the socket level (``RefusingPort``, ``BlackholePort``) and of a
/// free port for ``LocalNginx``.
enum LoopbackSocket {
    /// A new socket bound to 127.0.0.1 (listening with `backlog` when given), and its
    /// address with the port filled in. No SO_REUSEADDR: no server can share the port.
    static func bound(listening backlog: Int32? = nil) throws -> (descriptor: Int32, address: sockaddr_in) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TLSServerError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let isBound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && (backlog.map { listen(descriptor, $0) == 0 } ?? true)
                    && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard isBound else {
            close(descriptor)
            throw TLSServerError(backlog == nil ? "bind failed" : "bind or listen failed")
        }
        return (descriptor, address)
    }
}
