/// How a host turned a connection away (``TransferResponse/refusal``), which decides how
/// much of it ``HostHealth`` needs before remembering the host as down.
enum HostRefusal: Sendable {
    /// Refused before connecting (`ECONNREFUSED`): nothing listens on the port, whichever
    /// URL asked, so each connection counts.
    case refused
    /// Reset or closed before any byte of an answer, or the TLS handshake broken off: a
    /// firewall or a server may do that to one URL only, so it counts once per URL.
    case turnedAway
}
