import Glibc

/// When a transfer's socket last received bytes, from the kernel, for the stall check.
///
/// curl hands the header callback whole lines only, so a head dripped a byte at a time
/// shows no activity to the callbacks and would be cut as stalled although bytes keep
/// arriving (<doc:Security#Hostile-input>). The kernel knows better: `TCP_INFO`'s
/// `tcpi_last_data_recv` counts every byte. Loop-thread only (never `Sendable`): it
/// remembers the descriptors our open-socket callback made; a transfer's socket is the one
/// whose local and remote ports match those curl reported before sending (a reused
/// connection included). Descriptors curl has closed since fail `getsockname` and are
/// forgotten when next looked at.
final class SocketActivity {
    private var descriptors: Set<Int32> = []

    func opened(_ descriptor: Int32) {
        descriptors.insert(descriptor)
    }

    /// Milliseconds since the socket `localPort` -> `remotePort` last received data, or
    /// nil when no known socket matches.
    func millisecondsSinceReceive(localPort: Int, remotePort: Int) -> UInt64? {
        guard localPort > 0 else { return nil }
        var closed: [Int32] = []
        defer { for descriptor in closed { descriptors.remove(descriptor) } }
        for descriptor in descriptors {
            guard let local = Self.port(of: descriptor, peer: false) else {
                closed.append(descriptor)
                continue
            }
            guard local == localPort, Self.port(of: descriptor, peer: true) == remotePort else { continue }
            var info = tcp_info()
            var size = socklen_t(MemoryLayout<tcp_info>.size)
            guard getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_INFO, &info, &size) == 0 else { return nil }
            return UInt64(info.tcpi_last_data_recv)
        }
        return nil
    }

    /// The port of the socket's local (or peer) address; IPv4 and IPv6 keep it at the same
    /// offset, in network byte order. nil when `descriptor` is no longer a socket.
    private static func port(of descriptor: Int32, peer: Bool) -> Int? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                peer ? getpeername(descriptor, socketAddress, &length) : getsockname(descriptor, socketAddress, &length)
            }
        }
        guard result == 0, address.ss_family == sa_family_t(AF_INET) || address.ss_family == sa_family_t(AF_INET6)
        else { return nil }
        return withUnsafeBytes(of: &address) { bytes in Int(bytes[2]) << 8 | Int(bytes[3]) }
    }
}
