/// The two kinds of names a remote cache holds, the layout any server that stores what it
/// is sent accepts (README, "A cache shared by a fleet"): `cas/<sha256>` for an image's
/// bytes, so runners that met one image under several URLs store it once, and
/// `ac/<key digest>` for the record that leads from a URL to them.
enum RemotePath: Sendable, Equatable {
    case object(sha256: String)
    case record(KeyDigest)

    /// `cas/<64 hex digits>` or `ac/<32 hex digits>`.
    var text: String {
        switch self {
        case .object(let sha256): "cas/" + sha256
        case .record(let digest): "ac/" + digest.hex
        }
    }
}
