import Foundation
import SDFetchTestSupport
import Testing

@testable import sdfetch

/// The man page and completion scripts come from the option tables, so they list exactly
/// what the parser accepts; these tests render and load them with the real tools.
@Suite("generated man page and completions", .timeLimit(.minutes(1)), .cleansUp)
struct GeneratedDocsTests {
    let directory = TemporaryDirectory("docs")

    private func generate(_ arguments: [String], to name: String) async throws -> String {
        let run = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        #expect(run.status == 0)
        let path = directory.appending(name)
        try Data(run.standardOutput.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(
        "the man page renders with man -l and lists every fetch option",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/man"), "man (man-db) is not installed"))
    func manPageRenders() async throws {
        let page = try await generate(["--generate-man"], to: "sdfetch.1")
        let run = try await ProcessRun.launch(
            "/usr/bin/man", ["-l", page], environment: ["MANWIDTH": "100", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
        #expect(run.status == 0)
        #expect(!run.standardError.contains("warning"), "\(run.standardError)")
        #expect(run.standardOutput.contains("SDFETCH(1)"))
        for option in FetchCommand.allOptions {
            #expect(run.standardOutput.contains("--" + option.long), "--\(option.long)")
        }
    }

    @Test("the bash completion loads and completes options per command")
    func bashCompletionLoads() async throws {
        let script = try await generate(["--generate-completion", "bash"], to: "sdfetch.bash")
        let probe = """
            source "$1" || exit 9
            complete -p sdfetch || exit 8
            COMP_WORDS=(sdfetch --per); COMP_CWORD=1; _sdfetch; echo "fetch: ${COMPREPLY[*]}"
            COMP_WORDS=(sdfetch clean --dr); COMP_CWORD=2; _sdfetch; echo "clean: ${COMPREPLY[*]}"
            COMP_WORDS=(sdfetch --per); COMP_CWORD=1; _sdfetch; echo "fetch again: ${COMPREPLY[*]}"
            COMP_WORDS=(sdfetch --verify ""); COMP_CWORD=2; _sdfetch; echo "verify: ${COMPREPLY[*]}"
            COMP_WORDS=(sdfetch -j 4 --progress a); COMP_CWORD=4; _sdfetch; echo "progress: ${COMPREPLY[*]}"
            COMP_WORDS=(sdfetch failed ""); COMP_CWORD=2; _sdfetch; echo "failed: ${COMPREPLY[*]}"
            COMP_WORDS=(sdfetch failed remove ""); COMP_CWORD=3; _sdfetch; echo "failed remove: ${COMPREPLY[*]}"
            for command in clean verify merge; do
                COMP_WORDS=(sdfetch $command -); COMP_CWORD=2; _sdfetch; echo "all $command: ${COMPREPLY[*]}"
            done
            """
        let run = try await ProcessRun.launch("/bin/bash", ["-c", probe, "probe", script])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("fetch: --per-host\n"))
        #expect(run.standardOutput.contains("clean: --dry-run\n"))
        #expect(run.standardOutput.contains("verify: structure full header none\n"))
        #expect(run.standardOutput.contains("progress: auto always\n"))
        #expect(run.standardOutput.contains("failed: list clear remove\n"))
        #expect(run.standardOutput.contains("failed remove: \n"))
        let optionLists = run.standardOutput.split(separator: "\n").filter { $0.hasPrefix("all ") }
        #expect(optionLists.count == 3)
        for line in optionLists {
            #expect(line.split(separator: " ").filter { $0 == "-q" }.count == 1, "\(line)")
        }
    }

    @Test("-q is listed once per command, in help and the man page as in completions")
    func quietListedOnce() throws {
        for command in [CleanCommand.self, VerifyCommand.self, MergeCommand.self] as [any ParsableCommand.Type] {
            let help = HelpText.command(command)
            #expect(help.components(separatedBy: "--quiet").count == 2, "\(command.name): \(help)")
        }
        let page = ManPage.render()
        let cleanSection = try #require(page.components(separatedBy: ".SH CLEAN OPTIONS").last)
        let clean = cleanSection.components(separatedBy: ".SH ").first ?? ""
        #expect(clean.components(separatedBy: "quiet").count == 2, "\(clean)")
    }

    @Test("zsh and fish scripts are generated for every option")
    func otherShells() async throws {
        let zsh = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["--generate-completion", "zsh"])
        let fish = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["--generate-completion", "fish"])
        for option in FetchCommand.allOptions {
            #expect(zsh.standardOutput.contains("--\(option.long)"))
            #expect(fish.standardOutput.contains("-l \(option.long)"))
        }
        #expect(zsh.standardOutput.contains(":mode:(structure full header none)"))
        #expect(zsh.standardOutput.contains("'1:action:(list clear remove)'"))
        #expect(fish.standardOutput.contains("-l verify -r -f -a 'structure full header none'"))
        #expect(fish.standardOutput.contains("-n '__fish_seen_subcommand_from failed' -f -a 'list clear remove'"))
        let bad = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["--generate-completion", "csh"])
        #expect(bad.status == 2)
    }

    @Test("--version lists libcurl, libpng, libjpeg-turbo, giflib, libwebp and libavif")
    func versionListsLibraries() async throws {
        let run = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["--version"])
        for library in ["libcurl/", "libpng/", "libjpeg-turbo/", "giflib/", "libwebp/", "libavif/"] {
            #expect(run.standardOutput.contains(library), "\(library)")
        }
    }
}
