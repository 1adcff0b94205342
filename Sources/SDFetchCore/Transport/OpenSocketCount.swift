import Synchronization

/// The sockets one loop's curl holds for its transfers: live connections, idle ones in its
/// connection cache included, counted by the open- and close-socket callbacks.
///
/// Owned by the loop's ``CurlEngine/Core`` and handed to curl as the close callback's
/// data, which each connection keeps for as long as it lives: the core outlives them all
/// (its `deinit` closes the last ones). The loop reads it to tell when idle connections
/// pile up (<doc:Fetching#Connections>).
final class OpenSocketCount: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .relaxed) }

    func opened() {
        count.add(1, ordering: .relaxed)
    }

    func closed() {
        count.subtract(1, ordering: .relaxed)
    }
}
