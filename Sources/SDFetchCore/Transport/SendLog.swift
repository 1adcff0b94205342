/// Requests curl is about to send, noted by pre-request callbacks during one
/// `curl_multi_perform` and read by the loop right after (`--wait` counts from sends).
///
/// Loop-thread only, like the transfers that write to it.
final class SendLog {
    struct Entry {
        let host: String
        let time: UInt64
        /// The transfer's first send (later ones are redirect hops).
        let firstForTransfer: Bool
    }

    private(set) var entries: [Entry] = []

    func record(_ host: String, firstForTransfer: Bool) {
        entries.append(Entry(host: host, time: MonotonicTime.nanoseconds(), firstForTransfer: firstForTransfer))
    }

    func removeAll() { entries.removeAll(keepingCapacity: true) }
}
