internal import CHiredis
import FoundationEssentials
import Glibc

/// One kept-alive connection to a Redis server for the remote cache tier, through hiredis'
/// blocking API: the calling thread waits for each round trip.
///
/// Commands go as argument vectors (`redisAppendCommandArgv`), so binary values need no
/// quoting, and several go in one round trip (``pipeline(_:)``). Connected on first use and
/// again after an I/O error (hiredis cannot reuse a context that failed), sending `setup`
/// (`AUTH`, `SELECT`) first each time. Every socket read and write is bounded by `timeout`
/// (`SO_RCVTIMEO`/`SO_SNDTIMEO`), the connection by the same. Not `Sendable`: the remote's
/// worker threads each own one (``RemoteWorkers``).
final class RemoteRedisConnection {
    private let host: String
    private let port: Int32
    private let timeout: timeval
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
        self.timeout = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        self.setup = setup
    }

    deinit {
        if let context { redisFree(context) }
    }

    /// Sends `commands` in one round trip and returns their replies in order. Throws,
    /// with `isUnanswered`, when the server cannot be reached or does not answer in time.
    func pipeline(_ commands: [[[UInt8]]]) throws(RemoteFailure) -> [Reply] {
        let context = try connected()
        var replies: [Reply] = []
        do throws(RemoteFailure) {
            for command in commands { try append(command, to: context) }
            for _ in commands { replies.append(try reply(from: context)) }
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
        for case .error(let text) in try pipeline(setup) {
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

    private func reply(from context: UnsafeMutablePointer<redisContext>) throws(RemoteFailure) -> Reply {
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(context, &raw) == REDIS_OK, let raw else {
            throw RemoteFailure("no answer: \(Self.errorText(context))", isUnanswered: true)
        }
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
