/// One row of a command's option table: its spellings, its help line, and where its value goes.
///
/// The same rows drive parsing, `--help` and "did you mean", so the three never drift.
/// `apply` uses plain `throws` (swift-frontend 6.3.1 crashes on arrays of typed-throws
/// closure literals, see PLATFORM-NOTES); it only ever throws ``UsageError``.
struct OptionSpec<Target>: Sendable {
    enum Arity: Sendable, Equatable {
        /// `--refresh`: takes no value; `--refresh=x` is an error.
        case flag
        /// `--timeout SEC`, `--timeout=SEC`, `-t SEC`, `-tSEC`; the string names the value in help.
        case value(String)
    }

    /// Without dashes: `concurrency`.
    let long: String
    /// `j` for `-j`.
    let short: Character?
    let arity: Arity
    /// One line, lower-case, ending with the default in parentheses when there is one.
    let help: String
    /// The value the option has when not given, as a user would type it (`7d`, `50M`),
    /// rendered from ``FetchOptions`` and the command's own defaults, never written by hand.
    let defaultText: String?
    /// Every value the option accepts, when they are a fixed few (`--verify`): offered by
    /// the shell completions.
    let choices: [String]
    /// Stores the value (`""` for a flag); `name` is the spelling the user typed, for messages.
    let apply: @Sendable (_ target: inout Target, _ value: String, _ name: String) throws -> Void

    init(
        _ long: String, short: Character? = nil, _ arity: Arity = .flag, help: String,
        default defaultText: String? = nil,
        choices: [String] = [],
        apply: @escaping @Sendable (_ target: inout Target, _ value: String, _ name: String) throws -> Void
    ) {
        self.long = long
        self.choices = choices
        self.short = short
        self.arity = arity
        self.help = defaultText.map { "\(help) (default \($0))" } ?? help
        self.defaultText = defaultText
        self.apply = apply
    }

    /// `-j, --concurrency N` as shown in help.
    var synopsis: String {
        var text = short.map { "-\($0), " } ?? "    "
        text += "--" + long
        if case .value(let name) = arity { text += " " + name }
        return text
    }

    /// `--help`/`-h`: the scanner recognises it by name before applying anything.
    static func help() -> OptionSpec {
        OptionSpec("help", short: "h", help: "show this help and exit") { _, _, _ in }
    }
}
