import Foundation
import SDFetchCore
import Testing

@testable import sdfetch

/// `--remote-cache`, `--remote-cache-mode` and the token variable, parsed in-process.
@Suite("remote cache options")
struct RemoteCacheOptionTests {
    private func parse(_ arguments: [String], _ variables: [String: String] = [:]) throws -> FetchCommand {
        let command = try CommandLineParser.parse(
            ["--no-config"] + arguments + ["list.txt"], environment: .detached(variables))
        return try #require(command as? FetchCommand)
    }

    @Test("--remote-cache repeats in order, the mode is read, and the token comes from the environment")
    func optionsApply() throws {
        let fetch = try parse(
            ["--remote-cache", "http://a/x", "--remote-cache", "https://b/y", "--remote-cache-mode", "read-only"],
            ["SDFETCH_REMOTE_CACHE_TOKEN": "t0ken"])
        #expect(fetch.options.remoteCache.urls == ["http://a/x", "https://b/y"])
        #expect(fetch.options.remoteCache.mode == .readOnly)
        #expect(fetch.options.remoteCache.bearerToken == "t0ken")
    }

    @Test("without a remote, the token variable is not read")
    func tokenNeedsRemote() throws {
        let fetch = try parse([], ["SDFETCH_REMOTE_CACHE_TOKEN": "t0ken"])
        #expect(fetch.options.remoteCache.bearerToken == nil)
    }

    @Test("a remote that is not http or https is a usage error")
    func schemeChecked() throws {
        #expect(throws: UsageError.self) { try parse(["--remote-cache", "ftp://a/x"]) }
        #expect(throws: UsageError.self) { try parse(["--remote-cache-mode", "write-only"]) }
    }
}
