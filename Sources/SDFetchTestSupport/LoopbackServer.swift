import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1 and a free port, scripted by the test.
///
/// Each path has a list of ``ScriptedResponse``s: request N gets response N, the last one
/// repeats. Unrouted paths answer 404. The server records every request and the peak
/// number of requests being answered at once, so tests assert what the world saw.
public final class LoopbackServer: Sendable {
    struct State {
        var routes: [String: [ScriptedResponse]] = [:]
        var requests: [RecordedRequest] = []
        var countByPath: [String: Int] = [:]
        var bytesSentByPath: [String: Int] = [:]
        var active = 0
        var peakActive = 0
        var connections = 0
    }

    private let accepted: AcceptedChannels
    private let channel: any Channel
    private let isShutDown = Atomic<Bool>(false)
    let state = Mutex(State())
    /// The bound port.
    public let port: Int

    /// Starts listening on 127.0.0.1 at a port the kernel picks.
    public init() async throws {
        let accepted = AcceptedChannels()
        let box = ServerBox()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 512)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                accepted.add(channel)
                box.server.withLock { $0 }?.state.withLock { $0.connections += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(LoopbackHandler(server: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        self.accepted = accepted
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
        box.server.withLock { $0 = self }
        TestScope.onExit { [self] in try? await self.shutdown() }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Scripts `path`: request N gets `responses[N]`, the last one repeats.
    public func route(_ path: String, _ responses: ScriptedResponse...) {
        route(path, responses)
    }

    public func route(_ path: String, _ responses: [ScriptedResponse]) {
        precondition(!responses.isEmpty, "a route needs at least one response")
        state.withLock { $0.routes[path] = responses }
    }

    /// Requests received for `path` (query included in the path as sent).
    public func requests(for path: String) -> Int { state.withLock { $0.countByPath[path, default: 0] } }

    /// Every request received, in arrival order.
    public var recordedRequests: [RecordedRequest] { state.withLock { $0.requests } }

    /// The requests received for `path`, in arrival order (headers and arrival times).
    public func recordedRequests(for path: String) -> [RecordedRequest] {
        state.withLock { $0.requests.filter { $0.path == path } }
    }

    /// All requests received.
    public var totalRequests: Int { state.withLock { $0.requests.count } }

    /// Waits until at least `count` requests have arrived, or `limit` has passed: true when
    /// they arrived. A deadline, not a sleep: it returns as soon as the server saw them.
    @discardableResult
    public func waitForRequests(_ count: Int, within limit: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while totalRequests < count, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return totalRequests >= count
    }

    /// TCP connections accepted so far: fewer than requests when clients keep them alive.
    public var connectionsAccepted: Int { state.withLock { $0.connections } }

    /// Most requests being answered at the same moment.
    public var peakConcurrentRequests: Int { state.withLock { $0.peakActive } }

    /// Body bytes written to clients for `path`.
    public func bytesSent(for path: String) -> Int { state.withLock { $0.bytesSentByPath[path, default: 0] } }

    /// Stops listening and ends the event loop. Idempotent: a test may stop the server early
    /// (to prove a later step needs no network) and its ``TestScope`` stops it again.
    public func shutdown() async throws {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try await channel.close()
        await accepted.closeAll()
    }

    // MARK: - Called by the handler on the event loop

    func begin(_ request: RecordedRequest) -> ScriptedResponse {
        state.withLock { state in
            let index = state.countByPath[request.path, default: 0]
            state.countByPath[request.path] = index + 1
            state.requests.append(request)
            state.active += 1
            state.peakActive = max(state.peakActive, state.active)
            guard let script = state.routes[request.path] else { return .status(404) }
            return script[min(index, script.count - 1)]
        }
    }

    func sent(_ bytes: Int, for path: String) {
        state.withLock { $0.bytesSentByPath[path, default: 0] += bytes }
    }

    func end() {
        state.withLock { $0.active -= 1 }
    }
}

/// Lets child channels find the server, which exists only once bound.
final class ServerBox: Sendable {
    let server = Mutex<LoopbackServer?>(nil)
}
