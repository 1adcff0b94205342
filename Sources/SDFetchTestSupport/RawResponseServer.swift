import NIOCore
import NIOPosix
import Synchronization

/// A TCP server on 127.0.0.1 that answers every request with bytes the test writes by
/// hand: what no HTTP library would send (HTTP/0.9, a 4-digit status, a NUL in a header,
/// a 1 MB header line, a head dripped a byte at a time).
///
/// Each connection reads one request head (up to the blank line, or to `requestEnd`: `\r\n`
/// for a Redis command's first line), then sends the ``Step``s in order and closes.
/// `connections` counts accepted connections.
public final class RawResponseServer: Sendable {
    /// One piece of the answer.
    public struct Step: Sendable {
        public var bytes: [UInt8]
        /// Wait before sending these bytes.
        public var delay: Duration

        public init(_ bytes: [UInt8], after delay: Duration = .zero) {
            self.bytes = bytes
            self.delay = delay
        }

        public init(_ text: String, after delay: Duration = .zero) {
            self.init(Array(text.utf8), after: delay)
        }
    }

    private let accepted: AcceptedChannels
    private let channel: any Channel
    private let isShutDown = Atomic<Bool>(false)
    public let port: Int

    public init(_ steps: [Step], requestEnd: String = "\r\n\r\n") async throws {
        let accepted = AcceptedChannels()
        let counter = Counter()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                accepted.add(channel)
                counter.value.add(1, ordering: .relaxed)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        RawResponseHandler(steps: steps, requestEnd: Array(requestEnd.utf8)))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        self.accepted = accepted
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
        self.counter = counter
        TestScope.onExit { [self] in try? await self.shutdown() }
    }

    private let counter: Counter

    public var connections: Int { counter.value.load(ordering: .relaxed) }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Stops listening and ends the event loop. Idempotent: a test may stop the server early
    /// (to prove a later step needs no network) and its ``TestScope`` stops it again.
    public func shutdown() async throws {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try await channel.close()
        await accepted.closeAll()
    }
}

private final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

/// Reads a request head, then plays the steps and closes (one connection, its event loop only).
private final class RawResponseHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let steps: [RawResponseServer.Step]
    private var received: [UInt8] = []
    private let requestEnd: [UInt8]
    private var answered = false

    init(steps: [RawResponseServer.Step], requestEnd: [UInt8]) {
        self.steps = steps
        self.requestEnd = requestEnd
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        received += buffer.readBytes(length: buffer.readableBytes) ?? []
        let end = requestEnd.count
        guard !answered, received.count >= end,
            (0...(received.count - end)).contains(where: { received[$0..<($0 + end)].elementsEqual(requestEnd) })
        else { return }
        answered = true
        play(steps[...], context: context)
    }

    private func play(_ rest: ArraySlice<RawResponseServer.Step>, context: ChannelHandlerContext) {
        guard let step = rest.first, context.channel.isActive else {
            context.close(promise: nil)
            return
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        // @Sendable: the scheduled task may run it; it reaches the handler through the loop-bound box.
        let send: @Sendable () -> Void = {
            let (handler, context) = loopBound.value
            var buffer = context.channel.allocator.buffer(capacity: step.bytes.count)
            buffer.writeBytes(step.bytes)
            context.writeAndFlush(handler.wrapOutboundOut(buffer), promise: nil)
            handler.play(rest.dropFirst(), context: context)
        }
        if step.delay > .zero {
            context.eventLoop.scheduleTask(in: TimeAmount(step.delay)) { send() }
        } else {
            send()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
