import SDFetchCore
import Testing

@testable import sdfetch

/// Table-driven checks of the Foundation-only parser: what parses, into what, and the
/// exact message of what does not.
@Suite("argument parsing")
struct ArgumentParsingTests {
    let environment = ProcessEnvironment.detached(["HOME": "/home/u"])

    private func fetch(_ arguments: [String]) throws -> FetchCommand {
        let command = try CommandLineParser.parse(arguments, environment: environment)
        return try #require(command as? FetchCommand)
    }

    struct Good: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let check: @Sendable (FetchCommand) -> Bool
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let good: [Good] = [
        Good(arguments: []) {
            $0.sources == [.standardInput] && $0.options.concurrency == 256 && $0.options.pacing.perHost == 6
                && $0.options.verify == .structure
        },
        Good(arguments: ["urls.txt"]) { $0.sources == [.file("urls.txt")] },
        Good(arguments: ["fetch", "a", "-", "b"]) { $0.sources == [.file("a"), .standardInput, .file("b")] },
        Good(arguments: ["-j", "8"]) { $0.options.concurrency == 8 },
        Good(arguments: ["-j8"]) { $0.options.concurrency == 8 },
        Good(arguments: ["--concurrency=32", "f"]) { $0.options.concurrency == 32 && $0.sources == [.file("f")] },
        Good(arguments: ["--concurrency", "1024"]) { $0.options.concurrency == 1024 },
        Good(arguments: ["-t", "2.5"]) { $0.options.timeout == .milliseconds(2500) },
        Good(arguments: ["--timeout=1m"]) { $0.options.timeout == .seconds(60) },
        Good(arguments: ["--max-age", "2h"]) { $0.options.maxAge == .seconds(7200) },
        Good(arguments: ["--max-cache-size", "2G"]) { $0.options.maxCacheSize == 2 << 30 },
        Good(arguments: ["--max-bytes=512K"]) { $0.options.maxBytes == 512 << 10 },
        Good(arguments: ["--max-pixels", "1000"]) { $0.options.maxPixels == 1000 },
        Good(arguments: ["--retries", "0", "--max-redirects", "1", "--host-failures", "0"]) {
            $0.options.retries == 0 && $0.options.maxRedirects == 1 && $0.options.hostFailures == 0
        },
        Good(arguments: ["--refresh", "--offline", "--retry-failed", "--json", "-q"]) {
            $0.options.refresh && $0.options.offline && $0.options.retryFailed && $0.isJSON && $0.isQuiet
        },
        Good(arguments: ["--verify", "header"]) { $0.options.verify == .header },
        Good(arguments: ["--verify", "structure"]) { $0.options.verify == .structure },
        Good(arguments: ["-H", "X-A: 1", "--header=X-B: 2", "-HX-C: 3"]) {
            $0.options.headers == ["X-A: 1", "X-B: 2", "X-C: 3"]
        },
        Good(arguments: ["-A", "bot/1"]) { $0.options.userAgent == "bot/1" },
        Good(arguments: ["-o", "out", "--shard", "1/3"]) {
            $0.outputDirectory == "out" && $0.shard == Shard(index: 1, count: 3)
        },
        Good(arguments: ["--progress=always"]) { $0.progress == .always },
        Good(arguments: ["--cache-dir", "/c", "x"]) { $0.cacheDirectory == "/c" },
        Good(arguments: ["--", "-j", "--json"]) { $0.sources == [.file("-j"), .file("--json")] && !$0.isJSON },
        Good(arguments: ["./clean"]) { $0.sources == [.file("./clean")] },
        Good(arguments: ["-j", "2", "clean"]) { $0.sources == [.file("clean")] },
    ]

    @Test("good argument vectors parse into the expected fetch command", arguments: good)
    func parsesGood(_ vector: Good) throws {
        #expect(vector.check(try fetch(vector.arguments)))
    }

    static let bad: [(arguments: [String], message: String)] = [
        (["--concurency", "8"], "unknown option --concurency (did you mean '--concurrency'?)"),
        (["--jsno"], "unknown option --jsno (did you mean '--json'?)"),
        (["--max-cache", "1G"], "unknown option --max-cache (did you mean '--max-cache-size'?)"),
        (["--frobnicate"], "unknown option --frobnicate"),
        (["-x"], "unknown option -x (short options: -j -t -H -A -o -k -v -q -h)"),
        (["-j"], "option -j needs a value N"),
        (["-j", "0"], "option -j: '0' is not a number from 1 to 1024"),
        (["--concurrency=many"], "option --concurrency: 'many' is not a number from 1 to 1024"),
        (["--max-age", "7x"], "option --max-age: '7x' is not a duration (a number with ms, s, m, h, d or w, e.g. 7d)"),
        (
            ["--max-bytes", "50Q"],
            "option --max-bytes: '50Q' is not a size (bytes, or a number with K, M, G or T, e.g. 50M)"
        ),
        (
            ["--verify", "ful"],
            "option --verify: 'ful' is not one of structure, full, header, none (did you mean 'full'?)"
        ),
        (["--progress", "sometimes"], "option --progress: 'sometimes' is not one of auto, always, never"),
        (["--shard", "3/3"], "option --shard: '3/3' is not a shard K/N with 0 <= K < N (e.g. 0/3)"),
        (["--refresh=yes"], "option --refresh takes no value"),
        (["-H", "no colon"], "option -H: 'no colon' is not a header 'Name: value'"),
        (["-t", "0"], "option -t: the timeout must be more than 0"),
        (["-A", "bot\r\nX-Evil: 1"], "option -A: 'bot\\r\\nX-Evil: 1' contains a control character"),
        (["--cache-dir="], "option --cache-dir needs a directory"),
        (["stats", "--cache-dir"], "option --cache-dir needs a value DIR"),
        (
            ["clean", "--max-age", "soon"],
            "option --max-age: 'soon' is not a duration (a number with ms, s, m, h, d or w, e.g. 7d)"
        ),
        (["clean", "--dryrun"], "unknown option --dryrun (did you mean '--dry-run'?)"),
        (["clean", "extra"], "clean takes no arguments, got 'extra'"),
        (["stats", "--jsn"], "unknown option --jsn (did you mean '--json'?)"),
        (["path"], "path needs at least one URL"),
        (["path", "ftp://x/y"], "'ftp://x/y' is not a URL: unsupported scheme \"ftp\" (only http and https)"),
        (["failed"], "failed needs an action: list, clear or remove"),
        (["failed", "lst"], "option failed: 'lst' is not one of list, clear, remove (did you mean 'list'?)"),
        (["failed", "remove"], "failed remove needs at least one URL"),
        (["help", "clen"], "unknown command 'clen' (did you mean 'clean'?)"),
        (
            ["--max-age", "\u{1B}[31m"],
            "option --max-age: '\\x1b[31m' is not a duration (a number with ms, s, m, h, d or w, e.g. 7d)"
        ),
    ]

    @Test("bad argument vectors are usage errors naming the option", arguments: bad)
    func rejectsBad(_ arguments: [String], _ message: String) {
        #expect(throws: UsageError.self) { try CommandLineParser.parse(arguments, environment: environment) }
        do {
            _ = try CommandLineParser.parse(arguments, environment: environment)
        } catch {
            #expect(error.message == message)
        }
    }

    @Test("no FILE with a terminal on standard input is a usage error")
    func terminalStandardInput() {
        var terminal = environment
        terminal.isStandardInputTerminal = true
        #expect(throws: UsageError("no input: give a FILE of URLs, or pipe the list on standard input")) {
            try CommandLineParser.parse(["-j", "2"], environment: terminal)
        }
    }

    @Test("the command word is recognised only in first place, and --help anywhere asks for help")
    func commandWords() throws {
        #expect(try CommandLineParser.parse(["clean", "--max-size", "1G"], environment: environment) is CleanCommand)
        #expect(try CommandLineParser.parse(["stats"], environment: environment) is StatsCommand)
        #expect(try CommandLineParser.parse(["--version"], environment: environment) is VersionCommand)
        let help = try #require(
            try CommandLineParser.parse(["clean", "--dry-run", "--help"], environment: environment) as? HelpCommand)
        #expect(help.topic == "clean")
        let general = try #require(try CommandLineParser.parse(["--help"], environment: environment) as? HelpCommand)
        #expect(general.topic == nil)
    }

    @Test("options every command shares may come before the command word when no file has its name")
    func sharedOptionsFirst() throws {
        let stats = try #require(
            try CommandLineParser.parse(["--cache-dir", "/c", "stats"], environment: environment) as? StatsCommand)
        #expect(stats.cacheDirectory == "/c")
        #expect(
            try CommandLineParser.parse(["--no-config", "stats", "--json"], environment: environment) is StatsCommand)
        let clean = try #require(
            try CommandLineParser.parse(["-q", "--cache-dir=/c", "clean", "--dry-run"], environment: environment)
                as? CleanCommand)
        #expect(clean.isQuiet && clean.isDryRun && clean.cacheDirectory == "/c")
        #expect(try CommandLineParser.parse(["--quiet", "failed", "list"], environment: environment) is FailedCommand)
        // Any other option first keeps the word what it was there: a FILE to fetch.
        let fetch = try #require(
            try CommandLineParser.parse(["-j", "2", "stats"], environment: environment) as? FetchCommand)
        #expect(fetch.sources == [.file("stats")])
    }

    @Test("a command word after shared options that also names a file is a usage error saying how to write each")
    func sharedOptionsFirstAmbiguous() throws {
        var withFile = environment
        withFile.pathExists = { $0 == "stats" }
        let message =
            "'stats' is both a command and a file here: write 'sdfetch stats --cache-dir /c' to run the command, "
            + "or 'sdfetch --cache-dir /c ./stats' to fetch the URLs in the file"
        #expect(throws: UsageError(message)) {
            try CommandLineParser.parse(["--cache-dir", "/c", "stats"], environment: withFile)
        }
        // In first place the word is the command, file or not.
        #expect(try CommandLineParser.parse(["stats", "--cache-dir", "/c"], environment: withFile) is StatsCommand)
    }

    @Test("every default help prints is the value the command runs with: given back, it changes nothing")
    func helpDefaultsAreTheRealOnes() throws {
        let fetchHelp = HelpText.general()
        var shown = 0
        for option in FetchCommand.allOptions {
            guard let text = option.defaultText else { continue }
            var command = FetchCommand()
            try option.apply(&command, text, "--" + option.long)
            // A default printed wrong (by hand, or rendered in a unit the parser reads otherwise)
            // changes the command when typed back.
            #expect(String(describing: command) == String(describing: FetchCommand()), "--\(option.long) \(text)")
            #expect(fetchHelp.contains("(default \(text))"), "--\(option.long)")
            shown += 1
        }
        #expect(shown >= 14, "every option with a default shows it")
        for option in CleanCommand.allOptions {
            guard let text = option.defaultText else { continue }
            var command = CleanCommand()
            try option.apply(&command, text, "--" + option.long)
            #expect(String(describing: command) == String(describing: CleanCommand()), "clean --\(option.long) \(text)")
        }
        #expect(fetchHelp.contains("--max-age DUR") && fetchHelp.contains("(default 7d)"), "as the README spells it")
        #expect(fetchHelp.contains("(default 50M)") && fetchHelp.contains("(default 5G)"))
    }

    @Test("the cache directory comes from SDFETCH_CACHE_DIR, then XDG_CACHE_HOME, then HOME")
    func cacheDirectory() {
        #expect(
            ProcessEnvironment.detached(["SDFETCH_CACHE_DIR": "/a", "XDG_CACHE_HOME": "/x"]).defaultCacheDirectory
                == "/a")
        #expect(
            ProcessEnvironment.detached(["XDG_CACHE_HOME": "/x", "HOME": "/h"]).defaultCacheDirectory == "/x/sdfetch")
        #expect(
            ProcessEnvironment.detached(["XDG_CACHE_HOME": "rel", "HOME": "/h"]).defaultCacheDirectory
                == "/h/.cache/sdfetch")
        #expect(ProcessEnvironment.detached(["HOME": "/h"]).defaultCacheDirectory == "/h/.cache/sdfetch")
    }
}
