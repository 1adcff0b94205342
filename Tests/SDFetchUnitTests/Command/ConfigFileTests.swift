import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

@testable import sdfetch

/// The config file through the option tables: where it is found, precedence, and errors.
@Suite("config file", .cleansUp)
struct ConfigFileTests {
    let directory = TemporaryDirectory("config")

    /// An environment whose XDG config home holds `text` as `sdfetch/config`.
    private func environment(config text: String) throws -> ProcessEnvironment {
        let home = directory.appending("xdg")
        try FileManager.default.createDirectory(atPath: home + "/sdfetch", withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: home + "/sdfetch/config"))
        return ProcessEnvironment.detached(["HOME": directory.appending("home"), "XDG_CONFIG_HOME": home])
    }

    private func parse(_ arguments: [String], _ environment: ProcessEnvironment) throws -> any Command {
        try CommandLineParser.parse(arguments, environment: environment)
    }

    @Test("options in the config file apply, comments and blank lines are skipped")
    func valuesApply() throws {
        let environment = try environment(
            config:
                "# shared by fetch and clean\n\nmax-age = 2d\n--concurrency=12\nrefresh = true\noffline = false\nuser-agent = \"bot 1.0\"\n"
        )
        let fetch = try #require(try parse(["list.txt"], environment) as? FetchCommand)
        #expect(fetch.options.maxAge == .seconds(2 * 86400))
        #expect(fetch.options.concurrency == 12)
        #expect(fetch.options.refresh)
        #expect(!fetch.options.offline)
        #expect(fetch.options.userAgent == "bot 1.0")
    }

    @Test("a # after a space ends the value of every option; one inside a word or in quotes stays")
    func trailingComments() throws {
        let environment = try environment(
            config: """
                key-ignore-query = X-Amz-*          # S3 presigned
                key-ignore-query = Sig#1\t# a glob with a # inside
                max-age = 2d   # two days
                refresh = true # a switch
                user-agent = bot#1
                proxy = "http://proxy:3128" # quoted

                """)
        let fetch = try #require(try parse(["list.txt"], environment) as? FetchCommand)
        #expect(fetch.options.keyQueryFilter.patterns == ["X-Amz-*", "Sig#1"])
        #expect(fetch.options.maxAge == .seconds(2 * 86400))
        #expect(fetch.options.refresh)
        #expect(fetch.options.userAgent == "bot#1")
        #expect(fetch.options.connection.proxy == "http://proxy:3128")
        let quoted = try self.environment(config: "user-agent = \"bot #1\"  # a # inside quotes stays\n")
        #expect((try #require(try parse(["list.txt"], quoted) as? FetchCommand)).options.userAgent == "bot #1")
        // Not after a space: part of the value, which is then no number.
        let glued = try self.environment(config: "concurrency = 12# twelve\n")
        #expect(throws: UsageError.self) { try parse(["list.txt"], glued) }
    }

    @Test("quotes keep a comment's # only around a whole value; a stray quote in a value does not")
    func quotesAroundWholeValues() throws {
        let quoted = try environment(config: "header = \"X: a #1\"\n")
        #expect((try #require(try parse(["list.txt"], quoted) as? FetchCommand)).options.headers == ["X: a #1"])
        let inch = try environment(config: "header = X-Size: 5\" # inch\n")
        #expect((try #require(try parse(["list.txt"], inch) as? FetchCommand)).options.headers == ["X-Size: 5\""])
        let trailing = try environment(config: "header = \"X: a\" #1\n")
        #expect((try #require(try parse(["list.txt"], trailing) as? FetchCommand)).options.headers == ["X: a"])
    }

    @Test("fetch and clean share one max-age, and options of the other command are left to it")
    func sharedAcrossCommands() throws {
        let environment = try environment(config: "max-age = 3h\nconcurrency = 4\ndry-run = yes\n")
        let clean = try #require(try parse(["clean"], environment) as? CleanCommand)
        #expect(clean.maxAge == .seconds(3 * 3600))
        #expect(clean.isDryRun)
        let fetch = try #require(try parse(["list.txt"], environment) as? FetchCommand)
        #expect(fetch.options.maxAge == .seconds(3 * 3600))
        #expect(fetch.options.concurrency == 4)
    }

    @Test("the command line wins over the config file")
    func commandLineWins() throws {
        let environment = try environment(config: "concurrency = 12\nmax-age = 2d\n")
        let fetch = try #require(try parse(["-j", "3", "list.txt"], environment) as? FetchCommand)
        #expect(fetch.options.concurrency == 3)
        #expect(fetch.options.maxAge == .seconds(2 * 86400))
    }

    @Test("--no-config skips the file and --config names another")
    func selection() throws {
        let environment = try environment(config: "concurrency = 12\n")
        let skipped = try #require(try parse(["--no-config", "list.txt"], environment) as? FetchCommand)
        #expect(skipped.options.concurrency == 256)
        let other = directory.write("concurrency = 20\n", to: "other.conf")
        let named = try #require(try parse(["--config", other, "list.txt"], environment) as? FetchCommand)
        #expect(named.options.concurrency == 20)
        #expect(throws: UsageError.self) {
            try parse(["--config", directory.appending("missing.conf"), "x"], environment)
        }
    }

    @Test("errors name the file and the line")
    func errorsNameFileAndLine() throws {
        let environment = try environment(config: "max-age = 2d\n\nconcurency = 4\n")
        let path = directory.appending("xdg") + "/sdfetch/config"
        #expect(throws: UsageError("\(path):3: unknown option 'concurency' (did you mean 'concurrency'?)")) {
            try parse(["list.txt"], environment)
        }
        let bad = try self.environment(config: "timeout = soon\n")
        #expect(throws: UsageError.self) { try parse(["list.txt"], bad) }
        do {
            _ = try parse(["list.txt"], bad)
        } catch let error as UsageError {
            #expect(error.message.hasPrefix("\(path):1: option --timeout: 'soon' is not a duration"))
        }
        let flag = try self.environment(config: "refresh = maybe\n")
        #expect(throws: UsageError("\(path):1: --refresh is a switch: true or false")) { try parse(["x"], flag) }
    }
}
