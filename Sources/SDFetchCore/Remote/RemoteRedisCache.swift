/// A remote cache on a Redis server: the same `cas/<sha256>` and `ac/<key digest>` names
/// as keys, the values their bytes, written with an optional TTL (``RemoteRedisAddress``).
///
/// Reads are bounded before the bytes come: `GETRANGE key 0 MAX` returns at most one byte
/// past the bound, so a larger value is refused without being read whole. An upload is one
/// round trip: `SET` of the object with `NX` (a name is its content) and of the record,
/// pipelined. A cluster is used through one of its nodes only when that node holds every
/// key (a single shard, or a proxy); this tier does not follow `MOVED`.
struct RemoteRedisCache: RemoteCache {
    let address: RemoteRedisAddress
    let name: String

    init(url: String, address: RemoteRedisAddress) {
        self.address = address
        name = Redaction.masked(url)
    }

    func connect() -> any RemoteConnection {
        Session(
            address: address,
            connection: RemoteRedisConnection(
                host: address.host, port: address.port, timeout: RemoteHTTPConnection.connectTimeout,
                setup: address.setupCommands))
    }

    private final class Session: RemoteConnection {
        let address: RemoteRedisAddress
        let connection: RemoteRedisConnection

        init(address: RemoteRedisAddress, connection: RemoteRedisConnection) {
            self.address = address
            self.connection = connection
        }

        func read(_ path: RemotePath, maxBytes: Int64, timeout: Duration) throws(RemoteFailure) -> [UInt8]? {
            let command = ["GETRANGE", path.text, "0", String(maxBytes)].map { Array($0.utf8) }
            switch try connection.pipeline([command], timeout: timeout, maxBytes: maxBytes).first {
            // A missing key reads as the empty string; nothing this tier writes is empty.
            case .string(let bytes) where bytes.isEmpty: return nil
            case .string(let bytes) where Int64(bytes.count) > maxBytes:
                throw RemoteFailure("GETRANGE \(path.text): the value exceeds \(maxBytes) bytes")
            case .string(let bytes): return bytes
            case .missing: return nil
            case .error(let text): throw RemoteFailure("GETRANGE \(path.text): \(text)")
            default: throw RemoteFailure("GETRANGE \(path.text): an unexpected reply")
            }
        }

        func upload(
            _ bytes: [UInt8], at object: RemotePath, record: [UInt8], at recordPath: RemotePath, timeout: Duration
        ) throws(RemoteFailure) {
            let expiry = address.ttlSeconds.map { [Array("EX".utf8), Array(String($0).utf8)] } ?? []
            let commands = [
                [Array("SET".utf8), Array(object.text.utf8), bytes, Array("NX".utf8)] + expiry,
                [Array("SET".utf8), Array(recordPath.text.utf8), record] + expiry,
            ]
            // One round trip for both: the object's time and the record's.
            let replies = try connection.pipeline(commands, timeout: timeout + RemoteTier.recordTimeout, maxBytes: 0)
            for case .error(let text) in replies {
                throw RemoteFailure("SET: \(text)")
            }
        }
    }
}
