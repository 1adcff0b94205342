import NIOCore
import NIOHTTP1

/// Answers one connection's requests from the ``LoopbackServer``'s script.
///
/// Lives on its channel's event loop only, like every NIO handler.
final class LoopbackHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let box: ServerBox
    private var head: HTTPRequestHead?
    private var responding = false

    init(server: ServerBox) {
        self.box = server
    }

    private var server: LoopbackServer {
        guard let server = box.server.withLock({ $0 }) else { preconditionFailure("handler before server is bound") }
        return server
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            let request = RecordedRequest(path: head.uri, headers: head.headers.map { ($0.name, $0.value) })
            let response = server.begin(request)
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            if response.delay > .zero {
                context.eventLoop.scheduleTask(in: TimeAmount(response.delay)) {
                    let (handler, context) = loopBound.value
                    handler.respond(response, path: head.uri, keepAlive: head.isKeepAlive, context: context)
                }
            } else {
                respond(response, path: head.uri, keepAlive: head.isKeepAlive, context: context)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if responding {
            responding = false
            server.end()
        }
        context.fireChannelInactive()
    }

    // MARK: - Responding

    private func respond(_ response: ScriptedResponse, path: String, keepAlive: Bool, context: ChannelHandlerContext) {
        responding = true
        var headers = HTTPHeaders(response.headers)
        switch response.behavior {
        case .reset:
            finish(context: context)
            context.close(promise: nil)
            return
        case .streamed:
            headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked")
        case .normal, .truncated, .stall, .paced, .trickled:
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        }
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        switch response.behavior {
        case .normal:
            writeBody(response.body[...], path: path, context: context)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            finish(context: context)
            if !keepAlive { context.close(promise: nil) }
        case .truncated(let sentBytes):
            writeBody(response.body.prefix(sentBytes), path: path, context: context)
            context.flush()
            finish(context: context)
            context.close(promise: nil)
        case .stall(let sentBytes):
            writeBody(response.body.prefix(sentBytes), path: path, context: context)
            context.flush()
        case .streamed(let chunk), .paced(let chunk):
            stream(response.body[...], chunk: max(1, chunk), path: path, context: context)
        case .trickled(let chunk, let interval):
            trickle(response.body[...], chunk: max(1, chunk), interval: interval, path: path, context: context)
        case .reset:
            break
        }
    }

    private func writeBody(_ bytes: ArraySlice<UInt8>, path: String, context: ChannelHandlerContext) {
        guard !bytes.isEmpty else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        server.sent(bytes.count, for: path)
    }

    /// Sends one chunk, waits until the socket took it, then the next: a client that stops
    /// reading (or disconnects) stops the flow, so `bytesSent` shows how much it accepted.
    private func stream(_ rest: ArraySlice<UInt8>, chunk: Int, path: String, context: ChannelHandlerContext) {
        guard !isDone(rest, context: context) else { return }
        let piece = rest.prefix(chunk)
        var buffer = context.channel.allocator.buffer(capacity: piece.count)
        buffer.writeBytes(piece)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).whenSuccess {
            let (handler, context) = loopBound.value
            handler.server.sent(piece.count, for: path)
            handler.stream(rest.dropFirst(piece.count), chunk: chunk, path: path, context: context)
        }
    }

    /// Sends one chunk every `interval` until the body is out or the client is gone.
    private func trickle(
        _ rest: ArraySlice<UInt8>, chunk: Int, interval: Duration, path: String, context: ChannelHandlerContext
    ) {
        guard !isDone(rest, context: context) else { return }
        let piece = rest.prefix(chunk)
        writeBody(piece, path: path, context: context)
        context.flush()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: TimeAmount(interval)) {
            let (handler, context) = loopBound.value
            handler.trickle(rest.dropFirst(piece.count), chunk: chunk, interval: interval, path: path, context: context)
        }
    }

    /// True when a piecewise body should stop: the client left, or the body is out (then
    /// the response is ended here).
    private func isDone(_ rest: ArraySlice<UInt8>, context: ChannelHandlerContext) -> Bool {
        guard context.channel.isActive else { return true }
        guard rest.isEmpty else { return false }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        finish(context: context)
        return true
    }

    private func finish(context: ChannelHandlerContext) {
        guard responding else { return }
        responding = false
        server.end()
    }
}
