import Foundation

/// An HTTPS server on 127.0.0.1 with a certificate from a certificate authority made for
/// the test: `openssl s_server -WWW` serving files from a directory (HTTP/1.0, one
/// connection at a time, the connection closed after each answer).
///
/// The CA (``caFile``) and the server's key and certificate (for `IP:127.0.0.1`) are made
/// with the `openssl` command on each start, so nothing secret sits in the repository.
/// ``isAvailable`` says whether `openssl` exists; tests skip with a message otherwise.
public final class LocalTLSServer: Sendable {
    public let directory: String
    /// The PEM file of the CA that signed the server's certificate: what `--cacert` takes.
    public let caFile: String
    public let port: Int
    private let process: Process

    public static var openssl: String? {
        ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    public static var isAvailable: Bool { openssl != nil }

    /// Makes the CA and certificate in `directory` and starts serving the files there.
    public init(directory: String) throws {
        guard let openssl = Self.openssl else { throw TLSServerError("openssl not installed") }
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        caFile = directory + "/ca.pem"
        try Self.makeCertificates(openssl: openssl, in: directory)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.arguments = [
            "s_server", "-accept", "127.0.0.1:0", "-cert", "server.pem", "-key", "server.key", "-WWW",
        ]
        // Its log goes to a file, never a pipe nobody drains; the first line names the port.
        let log = directory + "/s_server.log"
        guard FileManager.default.createFile(atPath: log, contents: nil) else {
            throw TLSServerError("cannot create \(log)")
        }
        process.standardOutput = FileHandle(forWritingAtPath: log)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        // s_server prints "ACCEPT 127.0.0.1:PORT" once it listens.
        var port: Int?
        let deadline = ContinuousClock.now + .seconds(10)
        while port == nil, ContinuousClock.now < deadline, process.isRunning {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT") }) {
                port = Int(line.split(separator: ":").last ?? "")
            } else {
                usleep(10_000)
            }
        }
        guard let port else {
            kill(process.processIdentifier, SIGKILL)
            throw TLSServerError("openssl s_server did not start listening")
        }
        self.port = port
    }

    /// ``init(directory:)`` on a thread of its own: making keys and waiting for `openssl`
    /// would otherwise park one of the few cooperative threads and starve other suites.
    /// The server is stopped when the current test ends (``TestScope``).
    public static func start(directory: String) async throws -> LocalTLSServer {
        let server = try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try LocalTLSServer(directory: directory) }) }
            thread.name = "LocalTLSServer"
            thread.start()
        }
        TestScope.onExit { await server.stop() }
        return server
    }

    /// `https://127.0.0.1:PORT/name`.
    public func url(_ name: String) -> String { "https://127.0.0.1:\(port)/\(name)" }

    /// Writes a file the server then serves as `/name`.
    public func serve(_ bytes: [UInt8], as name: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
    }

    /// Kills the server: `s_server` ignores `SIGTERM` while it waits for a connection.
    public func stop() async {
        await process.kill()
    }

    /// EC keys: made in milliseconds, where RSA keys would load a machine whose other tests measure time.
    static func makeCertificates(openssl: String, in directory: String) throws {
        try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\n".utf8).write(
            to: URL(fileURLWithPath: directory + "/server.ext"))
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                "ca.key", "-out", "ca.pem", "-days", "2",
                "-subj", "/CN=sdfetch test CA",
            ],
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key",
                "-out", "server.csr", "-subj",
                "/CN=127.0.0.1",
            ],
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                "server.pem", "-days", "2", "-extfile", "server.ext",
            ],
        ]
        for arguments in steps {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: openssl)
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw TLSServerError("openssl \(arguments[0]) failed with status \(process.terminationStatus)")
            }
        }
    }
}
