import Glibc
import SDFetchCore
import Testing

@testable import sdfetch

/// The closing lines about hosts, fed the way a run feeds them: through the event consumer.
@Suite("host report")
struct HostReportTests {
    @Test("'most URLs do not resolve' is a share of every URL of the run, not of its failures")
    func unresolvedShareOfTheRun() async throws {
        let mostlyFine = try await closingText(downloaded: 98, unresolved: 2)
        #expect(!mostlyFine.contains("most URLs"), "\(mostlyFine)")
        let mostlyUnresolved = try await closingText(downloaded: 2, unresolved: 8)
        #expect(mostlyUnresolved.contains("most URLs failed because their host names do not resolve (8 of 10)"))
    }

    @Test("a slow host is named in plain words: how long its answers took, and how many")
    func slowHostInPlainWords() {
        var report = HostReport()
        report.slowHosts = [SlowHost(host: "img.example.org", transfers: 32, nanoseconds: 112_000_000_000)]
        #expect(
            report.closingText == "sdfetch: slow host: img.example.org took 3.5 s on average for each of 32 answers\n")
    }

    /// The consumer's closing text after `downloaded` successes and `unresolved` `dns` failures.
    private func closingText(downloaded: Int, unresolved: Int) async throws -> String {
        var results: [FetchResult] = []
        for index in 0..<(downloaded + unresolved) {
            let isUnresolved = index >= downloaded
            let url = isUnresolved ? "http://gone\(index).test/a.png" : "http://up.test/\(index).png"
            let key = try URLKey(parsing: url)
            results.append(
                isUnresolved
                    ? FetchResult(
                        url: url, key: key, status: .failed, failure: FetchFailure(.dns, "could not resolve host"))
                    : FetchResult(url: url, key: key, status: .downloaded))
        }
        let discard = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(discard) }
        let terminal = Terminal(environment: .detached(), progress: .never, quiet: false)
        return await withConsole(environment: .detached(), output: discard, error: discard) { console in
            var consumer = EventConsumer(console: console, terminal: terminal, isJSON: false)
            await consumer.handle(.results(results))
            return consumer.hosts.closingText
        }
    }
}
