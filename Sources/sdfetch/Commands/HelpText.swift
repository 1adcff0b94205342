import FoundationEssentials
import SDFetchCore

/// Renders `--help` from the option tables, so help never lists an option the parser lacks.
enum HelpText {
    /// `sdfetch --help`: every command's usage, the fetch options, environment and exit statuses.
    static func general() -> String {
        var text = "sdfetch \(SDFetchVersion.string): fetch, verify and cache images listed by URL\n\nUsage:\n"
        for command in CommandLineParser.commands {
            text += "  sdfetch \(command.usage)\n"
        }
        text += "  sdfetch help [COMMAND] | --help | --version\n\n"
        text += "Commands:\n"
        text += table(CommandLineParser.commands.map { ($0.name, $0.summary) })
        text += "\n" + wrap(FetchCommand.abstract) + "\nFetch options:\n" + optionLines(FetchCommand.allOptions)
        text += "\n" + footer
        return text
    }

    /// `sdfetch help COMMAND` and `sdfetch COMMAND --help`.
    ///
    /// Only `fetch` repeats the general footer (progress, colour, proxies); the cache commands
    /// end with what concerns them: where the cache is and their own exit statuses.
    static func command(_ command: any ParsableCommand.Type) -> String {
        let ending = command.name == FetchCommand.name ? footer : cacheCommandFooter(command.name)
        return "Usage: sdfetch \(command.usage)\n\n" + wrap(command.abstract) + "\nOptions:\n" + optionLines(command)
            + "\n" + ending
    }

    private static func cacheCommandFooter(_ name: String) -> String {
        var text = ""
        if name == CleanCommand.name {
            text += "Values: durations like 500ms 30s 10m 2h 7d 1w; sizes like 512K 50M 2G (1024-based).\n\n"
        }
        text += "Environment:\n"
        text += "  SDFETCH_CACHE_DIR   cache directory; else $XDG_CACHE_HOME/sdfetch; else ~/.cache/sdfetch\n\n"
        let one: [String: String] = [
            PathCommand.name: " 1 some URL has no entry;", VerifyCommand.name: " 1 a bad entry was removed;",
            MergeCommand.name: " 1 a source entry was bad;",
        ]
        let notFound = one[name] ?? ""
        text += "Exit status: 0 success;\(notFound) 2 usage error; 3 unusable cache directory.\n"
        return text
    }

    private static func optionLines<C: ParsableCommand>(_ command: C.Type) -> String {
        optionLines(C.allOptions)
    }

    private static func optionLines<T>(_ options: [OptionSpec<T>]) -> String {
        table(options.map { ($0.synopsis, $0.help) })
    }

    private static let footer = """
        Values: durations like 500ms 30s 10m 2h 7d 1w (a plain number is seconds); sizes like
        512K 50M 2G (1024-based; a plain number is bytes). '--opt=value' and '-j8' work; '--' ends options.

        Environment:
          SDFETCH_CACHE_DIR   cache directory; else $XDG_CACHE_HOME/sdfetch; else ~/.cache/sdfetch
          NO_COLOR            no colour on standard error
          TERM=dumb           no colour and no redrawn progress bar under --progress auto
          http_proxy, https_proxy, no_proxy   as in curl (unless --proxy is given)
          SDFETCH_SHARD       K/N for --shard auto (also GitLab, CircleCI, Buildkite, Slurm variables)

        Config file: $XDG_CONFIG_HOME/sdfetch/config, else ~/.config/sdfetch/config: 'option = value'
        lines with long option names, read by every command; the command line wins.

        Exit status: 0 every URL downloaded, cached or revalidated; 1 some URL ended with a
        status --fail-on names (failed, skipped or invalid by default; or a 'path' URL has no
        entry); 2 usage error; 3 unusable cache directory, unreadable input file, or results
        that cannot be written; 130 interrupted. With -q a skipped URL prints no line: it was
        reported when it failed.

        Publisher opt-outs are honoured: an image whose response carries X-Robots-Tag noai or
        noimageai is not stored (opted-out) and is skipped for --max-age; --ignore-opt-outs
        stores it.

        """

    /// Two aligned columns, the first padded to its widest cell (capped so help stays narrow).
    private static func table(_ rows: [(String, String)]) -> String {
        let width = min(30, rows.map(\.0.count).max() ?? 0)
        return rows.map { left, right in
            let padding =
                left.count <= width
                ? String(repeating: " ", count: width - left.count) : "\n" + String(repeating: " ", count: width + 2)
            return "  " + left + padding + "  " + right + "\n"
        }.joined()
    }

    /// `text` broken at spaces into lines of at most `width` columns, each ending in a newline.
    static func wrap(_ text: String, width: Int = 80) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.map { $0 + "\n" }.joined()
    }
}
