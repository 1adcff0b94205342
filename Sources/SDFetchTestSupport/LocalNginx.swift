import Foundation

/// A private nginx serving `directory/www` over HTTPS with HTTP/2 on 127.0.0.1, with a
/// certificate from a CA made for the test (see ``LocalTLSServer``). Its access log
/// records each request's connection number and protocol, so a test can see multiplexing.
///
/// ``startRemoteCache(directory:)`` starts it instead as a remote cache over plain HTTP:
/// WebDAV `PUT` into `directory/www` (`create_full_put_path`), as the README's recipe sets
/// it up, with two folders that refuse writes: `refuse/` (403) and `full/` (507).
///
/// One foreground process (`daemon off; master_process off;`) whose files all live in
/// `directory`; it never reads the system's nginx configuration. ``isAvailable`` is false
/// without `nginx` or `openssl`; tests then skip with a message.
public final class LocalNginx: Sendable {
    public static let binary = "/usr/sbin/nginx"
    public let directory: String
    public let caFile: String
    public let port: Int
    /// Whether it serves HTTPS (``start(directory:)``) or a plain-HTTP remote cache.
    public let isTLS: Bool
    private let process: Process

    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: binary) && LocalTLSServer.openssl != nil
    }

    /// Makes the certificates and configuration, starts nginx and waits until it accepts connections;
    /// stops it when the current test ends (``TestScope``).
    public static func start(directory: String) async throws -> LocalNginx {
        try await start(directory: directory, isTLS: true)
    }

    /// A remote cache on `http://127.0.0.1:PORT/` accepting `PUT`; stopped when the test ends.
    public static func startRemoteCache(directory: String) async throws -> LocalNginx {
        try await start(directory: directory, isTLS: false)
    }

    private static func start(directory: String, isTLS: Bool) async throws -> LocalNginx {
        // Off the cooperative pool: the start waits for the server's port.
        let server = try await onOwnThread { Result { try LocalNginx(directory: directory, isTLS: isTLS) } }.get()
        TestScope.onExit { await server.stop() }
        return server
    }

    private init(directory: String, isTLS: Bool) throws {
        self.directory = directory
        self.isTLS = isTLS
        try FileManager.default.createDirectory(atPath: directory + "/www", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        if isTLS {
            guard let openssl = LocalTLSServer.openssl else { throw TLSServerError("openssl not installed") }
            try LocalTLSServer.makeCertificates(openssl: openssl, in: directory)
        }
        caFile = directory + "/ca.pem"
        port = try Self.freePort()
        let server =
            isTLS
            ? """
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(directory)/server.pem;
                    ssl_certificate_key \(directory)/server.key;
                    root \(directory)/www;
                }
            """
            : """
                server {
                    listen 127.0.0.1:\(port);
                    root \(directory)/www;
                    client_max_body_size 64m;
                    dav_methods PUT;
                    create_full_put_path on;
                    location /refuse/ { limit_except GET HEAD { deny all; } }
                    location /full/ { if ($request_method = PUT) { return 507; } }
                }
            """
        let configuration = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log;
            events { worker_connections 64; }
            http {
                log_format connections '$connection $server_protocol $request_uri $request_method';
                access_log \(directory)/access.log connections;
                client_body_temp_path \(directory)/tmp/body;
                proxy_temp_path \(directory)/tmp/proxy;
                fastcgi_temp_path \(directory)/tmp/fastcgi;
                uwsgi_temp_path \(directory)/tmp/uwsgi;
                scgi_temp_path \(directory)/tmp/scgi;
            \(server)
            }

            """
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: directory + "/nginx.conf"))
        process = try startServerProcess(
            Self.binary, ["-p", directory, "-e", directory + "/error.log", "-c", directory + "/nginx.conf"], port: port,
            name: "nginx"
        ) { (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? "" }
    }

    /// `https://127.0.0.1:PORT/name` (`http://` for a remote cache).
    public func url(_ name: String) -> String { "\(isTLS ? "https" : "http")://127.0.0.1:\(port)/\(name)" }

    /// Files stored under `www/folder` so far (a remote cache's `cas` or `ac`), by name.
    public func storedNames(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/www/" + folder)) ?? []).sorted()
    }

    /// How many logged requests asked for a path starting with `prefix` (`/cache/ac/`), with
    /// `method` if given.
    public func requestCount(prefix: String, method: String? = nil) -> Int {
        let text = (try? String(contentsOfFile: directory + "/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").count { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 4, fields[2].hasPrefix(prefix) else { return false }
            return method.map { fields[3] == $0 } ?? true
        }
    }

    public func serve(_ bytes: [UInt8], as name: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/www/" + name))
    }

    /// `(connection number, protocol)` of each request logged so far.
    public var loggedRequests: [(connection: String, protocol: String)] {
        let text = (try? String(contentsOfFile: directory + "/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { line in
            let fields = line.split(separator: " ")
            return (String(fields.first ?? ""), fields.count > 1 ? String(fields[1]) : "")
        }
    }

    public func stop() async {
        await process.kill()
    }

    /// A port the kernel just handed out and released (nginx binds it right after).
    static func freePort() throws -> Int {
        let (descriptor, address) = try LoopbackSocket.bound()
        close(descriptor)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                connect(descriptor, socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
