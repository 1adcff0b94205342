/// The least rate a transfer must keep (curl's `--speed-limit` and `--speed-time`): one
/// whose bytes over a whole window stay under the floor fails as `timeout`, so a server
/// that trickles a head or a body a byte at a time cannot hold a run for hours
/// (<doc:Fetching#Retries-and-timeouts>).
///
/// The window is counted from the transfer's start, then window after window: a transfer
/// under the floor ends between one and two windows after its slow stretch began. Bytes of
/// the head and the body count alike. The floor is low on purpose: `-j` transfers share
/// one downlink, so 256 of them on a 2 Mbit/s line get about 1 KB/s each, and the floor
/// must leave those alone while catching a server that sends a byte a second.
public struct LowSpeedLimit: Sendable, Equatable {
    /// The floor in bytes per second (`--speed-limit`); 0 turns the rule off.
    public var bytesPerSecond: Int64
    /// The window (`--speed-time`).
    public var window: Duration

    /// 100 bytes per second over 30 seconds: what `sdfetch` does with no options.
    public static let standard = LowSpeedLimit(bytesPerSecond: 100, window: .seconds(30))

    public init(bytesPerSecond: Int64, window: Duration) {
        self.bytesPerSecond = bytesPerSecond
        self.window = window
    }

    /// Whether the rule applies at all.
    var isOn: Bool { bytesPerSecond > 0 && window > .zero }

    /// Bytes a transfer must receive within one window, at least 1.
    var bytesPerWindow: Int64 {
        let seconds = window.timeInterval
        let bytes = Double(bytesPerSecond) * seconds
        return bytes >= Double(Int64.max) ? .max : max(1, Int64(bytes.rounded(.up)))
    }
}
