/// One response the ``LoopbackServer`` gives on a route.
public struct ScriptedResponse: Sendable {
    /// How the bytes leave the server.
    public enum Behavior: Sendable {
        /// Head and whole body, with `Content-Length`.
        case normal
        /// Head with the real `Content-Length`, then only `sentBytes` of the body, then close.
        case truncated(sentBytes: Int)
        /// Head and `sentBytes` of the body, then nothing more until the client gives up.
        case stall(sentBytes: Int)
        /// Close the connection without answering.
        case reset
        /// The body in `chunk`-byte pieces without `Content-Length` (chunked encoding), one
        /// after the other as the client reads them; stops when the client disconnects.
        case streamed(chunk: Int)
        /// Like ``streamed(chunk:)`` but with the real `Content-Length` sent first, so a
        /// client that refuses a declared size early shows in `bytesSent`.
        case paced(chunk: Int)
        /// The body with its `Content-Length`, `chunk` bytes every `interval`: a slow but
        /// steady transfer that a stall timeout must not cut.
        case trickled(chunk: Int, interval: Duration)
    }

    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// Wait before sending anything.
    public var delay: Duration
    public var behavior: Behavior

    public init(
        status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = [], delay: Duration = .zero,
        behavior: Behavior = .normal
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.behavior = behavior
    }

    /// `200` with `body`.
    public static func ok(_ body: [UInt8], headers: [(String, String)] = []) -> ScriptedResponse {
        ScriptedResponse(status: 200, headers: headers, body: body)
    }

    /// A bodiless response with `status`.
    public static func status(_ status: Int, headers: [(String, String)] = []) -> ScriptedResponse {
        ScriptedResponse(status: status, headers: headers, body: Array("status \(status)".utf8))
    }

    /// A `302` to `location`.
    public static func redirect(to location: String, status: Int = 302) -> ScriptedResponse {
        ScriptedResponse(status: status, headers: [("Location", location)])
    }
}
