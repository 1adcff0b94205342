import NIOCore
import Synchronization

/// The connections a test server accepted, so stopping it closes them, as ending an event
/// loop of its own once did.
///
/// The servers share NIO's singleton event loop group: a group per server cost a thread and
/// three descriptors, and with the suites running side by side hundreds of servers are up
/// at once. Past about 1,300 open descriptors Foundation's `Process.run()` can crash the
/// test process (it copies each `/proc/self/fd` entry's whole name field, reading past the
/// directory buffer), so the tests keep their descriptors few.
final class AcceptedChannels: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var isClosed = false
    }

    private let state = Mutex(State())

    /// Keeps `channel` until it closes; one accepted after ``closeAll()`` is closed at once.
    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let isClosed = state.withLock { state in
            if !state.isClosed { state.channels[id] = channel }
            return state.isClosed
        }
        guard !isClosed else {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [self] _ in
            _ = state.withLock { $0.channels.removeValue(forKey: id) }
        }
    }

    /// Closes every connection still open, and any accepted later.
    func closeAll() async {
        let channels = state.withLock { state in
            state.isClosed = true
            defer { state.channels = [:] }
            return Array(state.channels.values)
        }
        for channel in channels { try? await channel.close() }
    }
}
