import Foundation

/// A private nginx serving `directory/www` over HTTPS with HTTP/2 on 127.0.0.1, with a
/// certificate from a CA made for the test (see ``LocalTLSServer``). Its access log
/// records each request's connection number and protocol, so a test can see multiplexing.
///
/// One foreground process (`daemon off; master_process off;`) whose files all live in
/// `directory`; it never reads the system's nginx configuration. ``isAvailable`` is false
/// without `nginx` or `openssl`; tests then skip with a message.
public final class LocalNginx: Sendable {
    public static let binary = "/usr/sbin/nginx"
    public let directory: String
    public let caFile: String
    public let port: Int
    private let process: Process

    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: binary) && LocalTLSServer.openssl != nil
    }

    /// Makes the certificates and configuration, starts nginx and waits until it accepts connections;
    /// stops it when the current test ends (``TestScope``).
    public static func start(directory: String) async throws -> LocalNginx {
        let server = try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try LocalNginx(directory: directory) }) }
            thread.name = "LocalNginx"
            thread.start()
        }
        TestScope.onExit { server.stop() }
        return server
    }

    private init(directory: String) throws {
        guard let openssl = LocalTLSServer.openssl else { throw TLSServerError("openssl not installed") }
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory + "/www", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        try LocalTLSServer.makeCertificates(openssl: openssl, in: directory)
        caFile = directory + "/ca.pem"
        port = try Self.freePort()
        let configuration = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log;
            events { worker_connections 64; }
            http {
                log_format connections '$connection $server_protocol $request_uri';
                access_log \(directory)/access.log connections;
                client_body_temp_path \(directory)/tmp/body;
                proxy_temp_path \(directory)/tmp/proxy;
                fastcgi_temp_path \(directory)/tmp/fastcgi;
                uwsgi_temp_path \(directory)/tmp/uwsgi;
                scgi_temp_path \(directory)/tmp/scgi;
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(directory)/server.pem;
                    ssl_certificate_key \(directory)/server.key;
                    root \(directory)/www;
                }
            }

            """
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: directory + "/nginx.conf"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-p", directory, "-e", directory + "/error.log", "-c", directory + "/nginx.conf"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = ContinuousClock.now + .seconds(10)
        while !Self.accepts(port: port) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                let log = (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? ""
                throw TLSServerError("nginx did not start: \(log)")
            }
            usleep(10_000)
        }
    }

    /// `https://127.0.0.1:PORT/name`.
    public func url(_ name: String) -> String { "https://127.0.0.1:\(port)/\(name)" }

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

    public func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// A port the kernel just handed out and released (nginx binds it right after).
    private static func freePort() throws -> Int {
        let (descriptor, address) = try LoopbackSocket.bound()
        close(descriptor)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(port: Int) -> Bool {
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
