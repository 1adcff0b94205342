/// Lets the options every command shares come before the command word, as people type
/// global options first for git, docker or kubectl: `sdfetch --cache-dir X stats` runs
/// `stats`, the same as `sdfetch stats --cache-dir X`.
///
/// Only when no file of that name exists: otherwise the word stays what it always was in
/// that place, a FILE to fetch, and the ambiguity is a usage error that says how to write
/// either meaning.
enum LeadingOptions {
    /// The shared options, by spelling, and whether each takes a value.
    static let shared: [String: Bool] = [
        "--cache-dir": true, "--config": true, "--no-config": false, "--quiet": false, "-q": false,
    ]

    /// `arguments` with a command word that follows shared options moved to first place;
    /// unchanged when no command word follows them.
    static func commandWordFirst(
        _ arguments: [String], environment: ProcessEnvironment
    ) throws(UsageError) -> [String] {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            guard argument.hasPrefix("-"), let takesValue = shared[name] else { break }
            index += takesValue && !argument.contains("=" as Character) ? 2 : 1
        }
        guard index > 0, index < arguments.count else { return arguments }
        let word = arguments[index]
        guard CommandLineParser.commandWords.contains(word) else { return arguments }
        let options = Array(arguments[..<index])
        guard !environment.pathExists(word) else {
            let written = options.map(Escaping.terminal).joined(separator: " ")
            throw UsageError(
                "'\(word)' is both a command and a file here: write 'sdfetch \(word) \(written)' to run the "
                    + "command, or 'sdfetch \(written) ./\(word)' to fetch the URLs in the file")
        }
        return [word] + options + arguments[(index + 1)...]
    }
}
