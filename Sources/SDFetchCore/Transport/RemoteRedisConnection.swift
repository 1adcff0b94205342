internal import CHiredis
import FoundationEssentials
import Glibc

/// One kept-alive connection to a Redis server for the remote cache tier, through hiredis'
/// blocking context: the calling thread waits for each round trip.
///
/// Commands go as argument vectors (`redisAppendCommandArgv`), so binary values need no
/// quoting, and several go in one round trip (``pipeline(_:timeout:maxBytes:)``). Connected
/// on first use and again after an I/O error (hiredis cannot reuse a context that failed),
/// sending `setup` (`AUTH`, `SELECT`) first each time.
///
/// Bounds: the connection must be made within `timeout`; a round trip must end within its
/// own `timeout` in all, not per socket read, so a server that trickles a byte at a time
/// cannot keep a worker thread (and, once every worker is held, the run) waiting. The reply
/// is therefore read here, not by `redisGetReply`: `poll` for the time left, `redisBufferRead`,
/// `redisGetReplyFromReader`. A host name is resolved inside `redisConnectWithTimeout`
/// (`getaddrinfo`), which no timeout bounds; an IP address needs no lookup. Not `Sendable`:
/// the remote's worker threads each own one (``RemoteWorkers``).
final class RemoteRedisConnection {
    private let host: String
    private let port: Int32
    private let timeout: timeval
    private let setupTimeout: Duration
    private let setup: [[[UInt8]]]
    private var context: UnsafeMutablePointer<redisContext>?

    /// A reply, as this tier reads them.
    enum Reply: Equatable {
        case string([UInt8])
        case missing
        case integer(Int64)
        case status(String)
        /// The server refused the command (`-OOM`, `-NOAUTH`, `-READONLY`...).
        case error(String)
    }

    init(host: String, port: Int, timeout: Duration, setup: [[[UInt8]]]) {
        self.host = host
        self.port = Int32(port)
        let milliseconds = Int(timeout / .milliseconds(1))
        self.timeout = Self.socketTimeout(milliseconds: milliseconds)
        setupTimeout = timeout
        self.setup = setup
    }

    deinit {
        if let context { redisFree(context) }
    }

    /// How much a round trip's buffered reply may exceed its `maxBytes` (the framing, the
    /// pipeline's other short replies) before the server is taken to announce a value it
    /// should not have: `GETRANGE` never returns more than it was asked for.
    static let replyMargin = 64 << 10

    /// Sends `commands` in one round trip and returns their replies in order, within `timeout`
    /// in all; the replies together hold at most about `maxBytes`. Throws, with `isUnanswered`,
    /// when the server cannot be reached, does not answer in time or sends more than that.
    func pipeline(_ commands: [[[UInt8]]], timeout: Duration, maxBytes: Int64) throws(RemoteFailure) -> [Reply] {
        let context = try connected()
        let deadline = ContinuousClock.now + timeout
        let limit = min(Int(clamping: maxBytes), Int.max - Self.replyMargin) + Self.replyMargin
        var replies: [Reply] = []
        do throws(RemoteFailure) {
            for command in commands { try append(command, to: context) }
            try flush(context, before: deadline)
            for _ in commands { replies.append(try reply(from: context, before: deadline, limit: limit)) }
        } catch {
            disconnect()
            throw error
        }
        return replies
    }

    // MARK: - The context

    private func connected() throws(RemoteFailure) -> UnsafeMutablePointer<redisContext> {
        if let context { return context }
        guard let made = redisConnectWithTimeout(host, port, timeout) else {
            throw RemoteFailure("cannot allocate a Redis context", isUnanswered: true)
        }
        guard made.pointee.err == 0, redisSetTimeout(made, timeout) == REDIS_OK else {
            let detail = Self.errorText(made)
            redisFree(made)
            throw RemoteFailure("connect: \(detail)", isUnanswered: true)
        }
        context = made
        guard !setup.isEmpty else { return made }
        for case .error(let text) in try pipeline(setup, timeout: setupTimeout, maxBytes: 0) {
            disconnect()
            throw RemoteFailure("set-up refused: \(text)")
        }
        return made
    }

    private func disconnect() {
        if let context { redisFree(context) }
        context = nil
    }

    private func append(_ command: [[UInt8]], to context: UnsafeMutablePointer<redisContext>) throws(RemoteFailure) {
        let lengths = command.map(\.count)
        // The argument pointers stay valid while the nested closures run; hiredis copies
        // the command into its output buffer before returning.
        let status = withArgumentPointers(command) { pointers in
            lengths.withUnsafeBufferPointer { sizes in
                redisAppendCommandArgv(context, Int32(command.count), pointers.baseAddress, sizes.baseAddress)
            }
        }
        guard status == REDIS_OK else { throw RemoteFailure("send: \(Self.errorText(context))", isUnanswered: true) }
    }

    /// Writes the appended commands, each blocking write bounded by the time left.
    private func flush(
        _ context: UnsafeMutablePointer<redisContext>, before deadline: ContinuousClock.Instant
    ) throws(RemoteFailure) {
        var done: Int32 = 0
        while done == 0 {
            let left = try Self.milliseconds(until: deadline)
            guard redisSetTimeout(context, Self.socketTimeout(milliseconds: left)) == REDIS_OK,
                redisBufferWrite(context, &done) == REDIS_OK
            else { throw RemoteFailure("send: \(Self.errorText(context))", isUnanswered: true) }
        }
    }

    /// The next reply, read as it arrives until `deadline` while the bytes buffered for it
    /// stay within `limit`.
    private func reply(
        from context: UnsafeMutablePointer<redisContext>, before deadline: ContinuousClock.Instant, limit: Int
    ) throws(RemoteFailure) -> Reply {
        let raw = try nextReply(from: context, before: deadline, limit: limit)
        defer { freeReplyObject(raw) }
        let reply = raw.assumingMemoryBound(to: redisReply.self).pointee
        let text = { () -> [UInt8] in
            guard let str = reply.str else { return [] }
            return [UInt8](UnsafeRawBufferPointer(start: str, count: reply.len))
        }
        switch reply.type {
        case REDIS_REPLY_STRING: return .string(text())
        case REDIS_REPLY_NIL: return .missing
        case REDIS_REPLY_INTEGER: return .integer(reply.integer)
        case REDIS_REPLY_STATUS: return .status(String(decoding: text(), as: UTF8.self))
        case REDIS_REPLY_ERROR: return .error(String(decoding: text(), as: UTF8.self))
        default: return .error("unexpected reply type \(reply.type)")
        }
    }

    /// The parsed reply, once the bytes for it have come; each wait for more is a `poll` for
    /// the time left, so hiredis' own read never blocks.
    private func nextReply(
        from context: UnsafeMutablePointer<redisContext>, before deadline: ContinuousClock.Instant, limit: Int
    ) throws(RemoteFailure) -> UnsafeMutableRawPointer {
        while true {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReplyFromReader(context, &raw) == REDIS_OK else {
                throw RemoteFailure("no answer: \(Self.errorText(context))", isUnanswered: true)
            }
            if let raw { return raw }
            let reader = context.pointee.reader.pointee
            guard reader.len - reader.pos <= limit else {
                throw RemoteFailure("no answer: a reply over \(limit) bytes", isUnanswered: true)
            }
            let left = try Self.milliseconds(until: deadline)
            var socket = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&socket, 1, Int32(clamping: left))
            // Nothing yet: the next turn's deadline check ends the wait.
            if ready == 0 || (ready < 0 && errno == EINTR) { continue }
            guard ready > 0, redisBufferRead(context) == REDIS_OK else {
                throw RemoteFailure("no answer: \(Self.errorText(context))", isUnanswered: true)
            }
        }
    }

    /// The milliseconds left until `deadline`, at least 1 (a zero socket timeout is none);
    /// throws the unanswered failure once it has passed.
    private static func milliseconds(until deadline: ContinuousClock.Instant) throws(RemoteFailure) -> Int {
        let left = deadline - .now
        guard left > .zero else { throw RemoteFailure("no answer in time", isUnanswered: true) }
        return max(1, Int(left / .milliseconds(1)))
    }

    private static func socketTimeout(milliseconds: Int) -> Glibc.timeval {
        Glibc.timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

private let emptyArgument: StaticString = ""

/// Runs `body` with C pointers to each of `arguments`' bytes, valid during the call.
private func withArgumentPointers<R>(
    _ arguments: [[UInt8]], _ body: (UnsafeMutableBufferPointer<UnsafePointer<CChar>?>) -> R
) -> R {
    var pointers: [UnsafePointer<CChar>?] = []
    pointers.reserveCapacity(arguments.count)
    func nest(_ index: Int) -> R {
        guard index < arguments.count else { return pointers.withUnsafeMutableBufferPointer { body($0) } }
        return arguments[index].withUnsafeBufferPointer { bytes in
            // An empty value still needs a valid pointer; its length is 0.
            let base = bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
            pointers.append(base ?? UnsafeRawPointer(emptyArgument.utf8Start).assumingMemoryBound(to: CChar.self))
            return nest(index + 1)
        }
    }
    return nest(0)
}
