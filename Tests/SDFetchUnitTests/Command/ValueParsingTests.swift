import SDFetchCore
import Testing

@testable import sdfetch

@Suite("typed option values")
struct ValueParsingTests {
    static let durationCases: [(String, Duration)] = [
        ("30", .seconds(30)), ("30s", .seconds(30)), ("10m", .seconds(600)), ("2h", .seconds(7200)),
        ("7d", .seconds(604_800)), ("1w", .seconds(604_800)), ("0", .zero), ("1.5h", .seconds(5400)),
        ("500ms", .milliseconds(500)), ("1500MS", .milliseconds(1500)),
        ("0.25", .milliseconds(250)), ("2H", .seconds(7200)),
    ]

    static let sizeCases: [(String, Int64)] = [
        ("0", 0), ("100", 100), ("512K", 512 * 1024), ("50M", 50 << 20), ("2G", 2 << 30), ("1T", 1 << 40),
        ("2g", 2 << 30), ("1.5K", 1536), ("64KB", 64 << 10), ("64KiB", 64 << 10),
    ]

    @Test("durations take ms s m h d w units, and a plain number is seconds", arguments: durationCases)
    func durations(_ text: String, _ expected: Duration) throws {
        #expect(try ValueParsers.duration(text, option: "--max-age") == expected)
    }

    @Test(
        "malformed durations are rejected",
        arguments: ["", "s", "ms", "-1", "7x", "1e3", "7 d", "+5", "nan", "inf", "1d2h", "5mss"])
    func badDurations(_ text: String) {
        #expect(throws: UsageError.self) { try ValueParsers.duration(text, option: "--max-age") }
    }

    @Test("sizes are 1024-based with K M G T, and a plain number is bytes", arguments: sizeCases)
    func sizes(_ text: String, _ expected: Int64) throws {
        #expect(try ValueParsers.size(text, option: "--max-size") == expected)
    }

    @Test(
        "the size a cache-cap warning suggests is a valid value no smaller than the bytes it stands for",
        arguments: [1, 1023, 1024, 1025, 300 << 20, 1_400_000_000, 5 << 30, (5 << 30) + 1, 3 << 40] as [Int64])
    func suggestedCap(_ bytes: Int64) throws {
        let text = CacheOverflow.sizeAtLeast(bytes)
        let parsed = try ValueParsers.size(text, option: "--max-cache-size")
        #expect(parsed >= bytes && Double(parsed) <= Double(bytes) * 1.1 + 1, "\(bytes) -> \(text)")
    }

    @Test("malformed sizes are rejected", arguments: ["", "K", "-1", "50Q", "1 G", "9999999T", "B", "1e6"])
    func badSizes(_ text: String) {
        #expect(throws: UsageError.self) { try ValueParsers.size(text, option: "--max-size") }
    }

    @Test(
        "a proxy is a URL curl can use: a known scheme (or none), a host, a port in range",
        arguments: ["proxy:3128", "http://proxy:3128", "HTTPS://p.example/", "socks5h://u:p@[::1]:1080", "socks4a://h"])
    func proxies(_ text: String) throws {
        #expect(try ValueParsers.proxy(text, option: "--proxy") == text)
    }

    @Test(
        "a proxy curl could not use is a usage error, not a failure of every URL",
        arguments: [
            "ftp://x", "http://u:pw@[bad", "http://proxy:99999", "http://:80", "http://h:", "http://h/path", "[]:80",
        ])
    func badProxies(_ text: String) {
        #expect(throws: UsageError.self) { try ValueParsers.proxy(text, option: "--proxy") }
    }

    @Test("shards are K/N with K below N")
    func shards() throws {
        #expect(try ValueParsers.shard("0/1", option: "--shard") == Shard(index: 0, count: 1))
        #expect(try ValueParsers.shard("2/3", option: "--shard") == Shard(index: 2, count: 3))
        for bad in ["3/3", "-1/3", "1/0", "1", "a/b", "1/3/4"] {
            #expect(throws: UsageError.self) { try ValueParsers.shard(bad, option: "--shard") }
        }
    }

    @Test("edit distance suggests only plausible typos")
    func suggestions() {
        #expect(EditDistance.between("kitten", "sitting") == 3)
        #expect(EditDistance.closest(to: "clen", among: ["fetch", "clean", "stats"]) == "clean")
        #expect(EditDistance.closest(to: "urls.txt", among: ["fetch", "clean", "stats"]) == nil)
        #expect(EditDistance.closest(to: "--conc", among: ["--concurrency", "--cache-dir"]) == "--concurrency")
    }

    @Test("a swap of two neighbouring letters is one edit, so transpositions get a suggestion")
    func transpositions() {
        #expect(EditDistance.between("clena", "clean") == 1)
        #expect(EditDistance.between("stast", "stats") == 1)
        #expect(EditDistance.closest(to: "clena", among: CommandLineParser.commandWords) == "clean")
        #expect(EditDistance.closest(to: "stast", among: CommandLineParser.commandWords) == "stats")
    }

    @Test("every duration and size is bounded when parsed, so no later arithmetic can trap")
    func bounds() throws {
        #expect(throws: UsageError.self) { try ValueParsers.duration("15251w", option: "--max-age") }
        #expect(throws: UsageError.self) {
            try ValueParsers.duration("9300000000", option: "-t", atMost: .seconds(86400))
        }
        #expect(throws: UsageError.self) { try ValueParsers.size("2048T", option: "--max-bytes") }
        #expect(try ValueParsers.duration("520w", option: "--max-age") == .seconds(520 * 604_800))
        #expect(try ValueParsers.size("1024T", option: "--max-bytes") == 1 << 50)
    }
}
