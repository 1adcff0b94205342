import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `--cacert`, `-k` and `--proxy` mapped onto libcurl, against a local TLS server whose
/// CA is made by the test and a loopback server standing in as the proxy.
@Suite("TLS and proxy", .cleansUp, .timeLimit(.minutes(1)))
struct TLSAndProxyTests {
    let directory = TemporaryDirectory("tls")

    private func startTLS() async throws -> LocalTLSServer {
        let server = try await LocalTLSServer.start(directory: directory.appending("tls"))
        try server.serve(SampleImages.png(seed: 3), as: "a.png")
        return server
    }

    private func request(_ url: String, _ connection: ConnectionOptions) -> TransferRequest {
        var request = TransferRequest(url: url, timeout: .seconds(5))
        request.connection = connection
        return request
    }

    @Test(
        "--cacert with the server's CA fetches over HTTPS",
        .enabled(if: LocalTLSServer.isAvailable, "openssl is not installed, so no local TLS server"))
    func caCertificateTrusted() async throws {
        let server = try await startTLS()
        let engine = CurlEngine.scoped(maxTransfers: 1)
        let response = await engine.perform(
            request(server.url("a.png"), ConnectionOptions(caCertificateFile: server.caFile)))

        #expect(response.failure == nil)
        #expect(response.body == SampleImages.png(seed: 3))
    }

    @Test(
        "without the CA the certificate is refused as tls, a transient failure",
        .enabled(if: LocalTLSServer.isAvailable, "openssl is not installed, so no local TLS server"))
    func unknownCAIsTLSFailure() async throws {
        let server = try await startTLS()
        let engine = CurlEngine.scoped(maxTransfers: 1)
        let response = await engine.perform(request(server.url("a.png"), ConnectionOptions()))

        #expect(response.failure?.kind == .tls)
        #expect(response.failure?.kind.isPermanent == false)
        #expect(response.body.isEmpty)
    }

    @Test(
        "-k fetches over HTTPS without verifying the certificate",
        .enabled(if: LocalTLSServer.isAvailable, "openssl is not installed, so no local TLS server"))
    func insecureSkipsVerification() async throws {
        let server = try await startTLS()
        let engine = CurlEngine.scoped(maxTransfers: 1)
        let response = await engine.perform(request(server.url("a.png"), ConnectionOptions(isInsecure: true)))

        #expect(response.failure == nil)
        #expect(response.body == SampleImages.png(seed: 3))
    }

    @Test(
        "over HTTP/2 several images share one connection",
        .enabled(if: LocalNginx.isAvailable, "nginx (with http2) or openssl is not installed"))
    func http2Multiplexes() async throws {
        let nginx = try await LocalNginx.start(directory: directory.appending("nginx"))
        for index in 0..<8 { try nginx.serve(SampleImages.png(seed: index), as: "\(index).png") }
        let engine = CurlEngine.scoped(maxTransfers: 8)
        let connection = ConnectionOptions(caCertificateFile: nginx.caFile)
        let responses = await withTaskGroup(of: TransferResponse.self) { group in
            for index in 0..<8 {
                group.addTask { await engine.perform(self.request(nginx.url("\(index).png"), connection)) }
            }
            var responses: [TransferResponse] = []
            for await response in group { responses.append(response) }
            return responses
        }

        #expect(responses.allSatisfy { $0.failure == nil })
        let logged = nginx.loggedRequests
        #expect(logged.count == 8)
        #expect(logged.allSatisfy { $0.protocol == "HTTP/2.0" })
        #expect(Set(logged.map(\.connection)).count == 1)
    }

    @Test("--proxy sends the request through the proxy, even for a host nobody can resolve")
    func proxyRoutesRequests() async throws {
        let proxy = try await LoopbackServer()
        // A forward proxy receives the absolute URL as the request target.
        let target = "http://images.invalid/a.png"
        proxy.route(target, .ok(SampleImages.png(seed: 4)))
        let engine = CurlEngine.scoped(maxTransfers: 1)
        let response = await engine.perform(
            request(target, ConnectionOptions(proxy: "http://127.0.0.1:\(proxy.port)")))
        let direct = await engine.perform(request(target, ConnectionOptions()))

        #expect(response.failure == nil)
        #expect(response.body == SampleImages.png(seed: 4))
        #expect(proxy.requests(for: target) == 1)
        #expect(direct.failure?.kind == .dns)
    }
}
