import Foundation

/// A private `redis-server` on 127.0.0.1, for the remote cache tests: no persistence, its
/// files in `directory`, stopped when the current test ends (``TestScope``). ``isAvailable``
/// is false without `redis-server` and `redis-cli`; tests then skip with a message.
public final class LocalRedis: Sendable {
    public static let binary = "/usr/bin/redis-server"
    public static let client = "/usr/bin/redis-cli"
    public let port: Int
    private let process: Process

    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: binary) && FileManager.default.isExecutableFile(atPath: client)
    }

    /// Starts a server with `settings` added to its command line (`--maxmemory 1`...), and
    /// waits until it accepts connections.
    public static func start(directory: String, settings: [String] = []) async throws -> LocalRedis {
        // Off the cooperative pool: the start waits for the server's port.
        let server = try await onOwnThread { Result { try LocalRedis(directory: directory, settings: settings) } }.get()
        TestScope.onExit { await server.stop() }
        return server
    }

    private init(directory: String, settings: [String]) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try LocalNginx.freePort()
        let arguments =
            [
                "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory,
                "--daemonize", "no", "--logfile", directory + "/redis.log",
            ] + settings
        process = try startServerProcess(Self.binary, arguments, port: port, name: "redis-server") {
            (try? String(contentsOfFile: directory + "/redis.log", encoding: .utf8)) ?? ""
        }
    }

    /// `redis://127.0.0.1:PORT` followed by `suffix` (`/2?ttl=60`).
    public func url(_ suffix: String = "") -> String { "redis://127.0.0.1:\(port)\(suffix)" }

    /// Runs one command through `redis-cli --raw` and returns its output, trimmed.
    public func command(_ arguments: String...) throws -> String {
        let run = try ProcessRun.run(Self.client, ["-p", String(port), "--raw"] + arguments)
        return run.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Keys whose names start with `prefix` (`cas/`), sorted.
    public func keys(_ prefix: String) throws -> [String] {
        try command("KEYS", prefix + "*").split(separator: "\n").map(String.init).sorted()
    }

    public func stop() async {
        await process.kill()
    }
}
