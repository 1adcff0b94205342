import FoundationEssentials
import Glibc

/// The config file (sdfetch(1) CONFIGURATION): `option = value` lines naming long options,
/// read through the same option table as the command line, before it, so the command line
/// wins.
///
/// `$XDG_CONFIG_HOME/sdfetch/config`, else `~/.config/sdfetch/config`; `--config FILE`
/// names another (which must exist), `--no-config` skips it. One file serves every
/// command: a line naming an option another command has (`dry-run` for `fetch`) is left
/// to that command, so `fetch` and `clean` can share one `max-age`. Errors name the file
/// and the line.
struct ConfigFile: Equatable {
    struct Line: Equatable {
        let number: Int
        /// The long option name, without dashes.
        let name: String
        let value: String
    }

    let path: String
    let lines: [Line]

    /// The file the command line and environment select, read; nil when there is none to read.
    static func load(
        for arguments: ArraySlice<String>, environment: ProcessEnvironment
    ) throws(UsageError) -> ConfigFile? {
        var explicit: String?
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if argument == "--" { break }
            if argument == "--no-config" { return nil }
            if argument == "--config", index < arguments.endIndex {
                explicit = arguments[index]
                index += 1
            } else if argument.hasPrefix("--config=") {
                explicit = String(argument.dropFirst("--config=".count))
            }
        }
        if let explicit {
            guard !explicit.isEmpty else { throw UsageError("option --config needs a file") }
            try checkTrust(explicit)
            guard let text = text(of: explicit) else {
                throw UsageError("option --config: cannot read '\(Escaping.terminal(explicit))'")
            }
            return try parse(text, path: explicit)
        }
        let path = defaultPath(in: environment)
        // The default file is optional: most machines have none.
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        try checkTrust(path)
        guard let text = text(of: path) else {
            throw UsageError("cannot read the config file '\(Escaping.terminal(path))' (use --no-config to skip it)")
        }
        return try parse(text, path: path)
    }

    /// Longest config file read; a longer one is not a config file.
    static let maxBytes = 1 << 20

    /// The file's text; nil when it cannot be read, is longer than ``maxBytes`` or is not
    /// UTF-8. Read with `read(2)`: Foundation's `String(contentsOfFile:encoding:)` leaks its
    /// buffer when the bytes are not UTF-8, and `FileManager.contents(atPath:)` when the
    /// file is empty (both found by `Fuzz/ConfigFuzzer`).
    private static func text(of path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= maxBytes else { return nil }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Refuses a config file someone else could have written, as ssh refuses such a
    /// `~/.ssh/config`: the file can turn on `insecure`, set a `proxy` and add headers to every
    /// request. The file itself is checked, through any link (a dotfile manager's link to a
    /// file this user owns is fine): owned by this user or root, and not writable by others.
    /// A FIFO or device is refused too: reading it could block forever.
    static func checkTrust(_ path: String) throws(UsageError) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }  // the read that follows names the problem
        let place = "the config file '\(Escaping.terminal(path))'"
        if info.st_mode & S_IFMT != S_IFREG {
            throw UsageError("\(place) is not a regular file (use --no-config to skip it)")
        }
        if info.st_uid != geteuid() && info.st_uid != 0 {
            throw UsageError(
                "\(place) is owned by user \(info.st_uid), not by this user: not read (use --no-config to skip it)")
        }
        if info.st_mode & S_IWOTH != 0 {
            throw UsageError(
                "\(place) is writable by every user (mode \(String(info.st_mode & 0o777, radix: 8))): not read "
                    + "(chmod o-w it, or use --no-config to skip it)")
        }
    }

    /// `$XDG_CONFIG_HOME/sdfetch/config` (absolute values only, as the XDG spec says), else `~/.config/sdfetch/config`.
    static func defaultPath(in environment: ProcessEnvironment) -> String {
        if let xdg = environment.variables["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/sdfetch/config" }
        let home =
            environment.variables["HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.path
        return home + "/.config/sdfetch/config"
    }

    /// Splits `text` into option lines: blank lines and `#` comments are skipped; `name = value`,
    /// the name optionally with its `--`, the value optionally in double quotes; a flag may stand alone.
    /// A `#` at the start of a line or after a space or tab starts a comment, on every line
    /// and for every option (``withoutComment(_:)``).
    static func parse(_ text: String, path: String) throws(UsageError) -> ConfigFile {
        var lines: [Line] = []
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = Self.trimmed(withoutComment(raw)) { $0.isWhitespace || $0 == "\u{FEFF}" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            var name = line
            var value = ""
            if let equals = line.firstIndex(of: "=") {
                name = Self.trimmed(line[..<equals]) { $0.isWhitespace }
                value = Self.trimmed(line[line.index(after: equals)...]) { $0.isWhitespace }
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = String(value.dropFirst().dropLast())
                }
            }
            if name.hasPrefix("--") { name = String(name.dropFirst(2)) }
            guard !name.isEmpty, !name.contains(" " as Character) else {
                throw UsageError("\(Escaping.terminal(path)):\(offset + 1): expected 'option = value'")
            }
            lines.append(Line(number: offset + 1, name: name, value: value))
        }
        return ConfigFile(path: path, lines: lines)
    }

    /// Options that only make sense on the command line.
    private static let commandLineOnly: Set<String> = ["help", "config", "no-config"]

    /// Applies every line `C` has an option for, through its table.
    func apply<C: ParsableCommand>(to command: inout C) throws(UsageError) {
        let table = C.allOptions
        for line in lines {
            let place = "\(Escaping.terminal(path)):\(line.number)"
            guard !Self.commandLineOnly.contains(line.name) else {
                throw UsageError("\(place): --\(line.name) belongs on the command line")
            }
            guard let spec = table.first(where: { $0.long == line.name }) else {
                if Self.otherCommandsKnow(line.name) { continue }
                let names = Self.allNames()
                throw UsageError(
                    "\(place): unknown option '\(Escaping.terminal(line.name))'"
                        + EditDistance.suggestion(for: line.name, among: names))
            }
            var value = line.value
            if spec.arity == .flag {
                switch line.value.lowercased() {
                case "", "true", "yes", "on", "1": value = ""
                case "false", "no", "off", "0": continue
                default: throw UsageError("\(place): --\(line.name) is a switch: true or false")
                }
            } else if value.isEmpty {
                throw UsageError("\(place): --\(line.name) needs a value")
            }
            do {
                try spec.apply(&command, value, "--" + line.name)
            } catch let error as UsageError {
                throw UsageError("\(place): \(error.message)", command: error.command)
            } catch {
                preconditionFailure("option tables throw only UsageError, got \(error)")
            }
        }
    }

    private static func otherCommandsKnow(_ name: String) -> Bool {
        CommandLineParser.commands.contains { command in command.longOptionNames.contains(name) }
    }

    private static func allNames() -> [String] {
        CommandLineParser.commands.flatMap { $0.longOptionNames }.filter { !commandLineOnly.contains($0) }
    }
}

extension ParsableCommand {
    /// Every long option name of the command, for the config file's cross-command check.
    static var longOptionNames: [String] { allOptions.map(\.long) }

    /// `--config FILE` and `--no-config`: read by ``ConfigFile/load(for:environment:)``
    /// before the scan; here so the scanner accepts them and help lists them.
    static var configOptions: [OptionSpec<Self>] {
        [
            OptionSpec("config", .value("FILE"), help: "read options from FILE (default ~/.config/sdfetch/config)") {
                _, value, name in
                guard !value.isEmpty else { throw UsageError("option \(name) needs a file") }
            },
            OptionSpec("no-config", help: "read no config file") { _, _, _ in },
        ]
    }
}

extension ConfigFile {
    /// `line` up to its comment: a `#` that starts the line or follows a space or tab. A `#`
    /// inside a word stays, so a URL's fragment (`proxy = http://p:3128/#x`) or a header
    /// value like `X-Tag:#1` needs no quotes. Quotes count only around a whole value, as
    /// ``parse(_:path:)`` strips them: `"a #1"` keeps its `#`, and only blanks or a comment
    /// may follow its closing quote. A `"` inside an unquoted value (`5" # inch`) is text.
    static func withoutComment(_ line: Substring) -> Substring {
        let isBlank = { (character: Character) in character == " " || character == "\t" }
        if let equals = line.firstIndex(of: "="),
            let start = line[line.index(after: equals)...].firstIndex(where: { !isBlank($0) }), line[start] == "\"",
            let close = line[line.index(after: start)...].firstIndex(of: "\"")
        {
            let rest = line[line.index(after: close)...].drop(while: isBlank)
            if rest.isEmpty || rest.first == "#" { return line[...close] }
        }
        var previous: Character = " "
        for index in line.indices {
            if line[index] == "#", isBlank(previous) { return line[..<index] }
            previous = line[index]
        }
        return line
    }

    /// `text` without the leading and trailing characters `isTrimmed` picks.
    static func trimmed(_ text: Substring, _ isTrimmed: (Character) -> Bool) -> String {
        guard let first = text.firstIndex(where: { !isTrimmed($0) }) else { return "" }
        let last = text.lastIndex { !isTrimmed($0) } ?? first
        return String(text[first...last])
    }
}
