import SDFetchCore

/// What `@main` runs once the command line is understood.
protocol Command: Sendable {
    func run(in environment: ProcessEnvironment) async -> ExitStatus
}

/// A command with an option table: the parser fills a default value from argv.
protocol ParsableCommand: Command {
    init()
    /// The command word (`clean`); `fetch` is also the default command.
    static var name: String { get }
    /// Usage line after `sdfetch `, e.g. `clean [--max-age DUR] [--dry-run] [--json]`.
    static var usage: String { get }
    /// A few words for the command list of `sdfetch --help`.
    static var summary: String { get }
    /// What the command does, one or two sentences, for `--help`.
    static var abstract: String { get }
    /// The command's own options; ``commonOptions`` are added by the parser.
    static var options: [OptionSpec<Self>] { get }

    var cacheDirectory: String? { get set }
    /// `-q`: no progress and no summary (every command takes it, sdfetch(1) SYNOPSIS). A
    /// command with nothing to silence keeps the default, which accepts and ignores it.
    var isQuiet: Bool { get set }
    /// The words a first argument may be (`failed list | clear | remove`), for completions;
    /// empty when arguments are files, URLs or nothing.
    static var argumentWords: [String] { get }
    /// A non-option argument (FILE, URL, subcommand word), in order.
    mutating func take(_ argument: String) throws(UsageError)
    /// Checks the whole command once every argument is in.
    mutating func validate(in environment: ProcessEnvironment) throws(UsageError)
}

extension ParsableCommand {
    /// The error for an argument given to a command that takes none (`sdfetch clean x`).
    static func unexpectedArgument(_ argument: String, after words: String? = nil) -> UsageError {
        UsageError("\(words ?? name) takes no arguments, got '\(Escaping.terminal(argument))'", command: name)
    }

    /// Options every command takes (`--cache-dir DIR`, `-q`, `--config FILE`; `sdfetch help`).
    static var commonOptions: [OptionSpec<Self>] {
        [
            OptionSpec("cache-dir", .value("DIR"), help: "cache directory (default: see ENVIRONMENT)") {
                command, value, name in
                guard !value.isEmpty else { throw UsageError("option \(name) needs a directory") }
                command.cacheDirectory = value
            },
            OptionSpec(
                "quiet", short: "q",
                help: "no progress, summary or notices, no line for a skipped URL or a host an earlier run "
                    + "found down: only results and failures"
            ) {
                command, _, _ in
                command.isQuiet = true
            },
            .help(),
        ]
    }

    var isQuiet: Bool {
        get { false }
        set {}
    }

    /// The full table: the command's own rows, then the common ones it does not define itself
    /// (`clean` has its own `-q` text), so help, man page and completions list each once.
    static var allOptions: [OptionSpec<Self>] {
        let own = Set(options.map(\.long))
        return options + (commonOptions + configOptions).filter { !own.contains($0.long) }
    }

    static var argumentWords: [String] { [] }

    mutating func validate(in environment: ProcessEnvironment) throws(UsageError) {}

    /// The cache directory to use: `--cache-dir`, else the environment's default; made absolute
    /// so printed paths (result lines, `path`) stay valid from any directory.
    func resolvedCacheDirectory(in environment: ProcessEnvironment) -> String {
        ProcessEnvironment.absolute(cacheDirectory ?? environment.defaultCacheDirectory)
    }

    /// Reports an unusable cache directory the one way every command does; returns exit 3.
    func cacheFailure(_ error: CacheError) -> ExitStatus {
        StandardError.write("sdfetch: \(Escaping.terminal(error.description))\n")
        return ExitStatus(error)
    }

    /// Names a cache someone else can write (see ``DiskCache/trustWarning``), as ssh names
    /// a key file others can read: a warning, the command goes on.
    func warnIfUntrusted(_ cache: DiskCache) {
        guard let why = cache.trustWarning else { return }
        StandardError.write(
            "sdfetch: warning: \(Escaping.terminal(cache.directory)): \(why): whoever can write it can feed "
                + "images to this run\n")
    }
}

/// A command that takes options only (`clean`, `stats`, `verify`): any argument is a usage error.
protocol ArgumentlessCommand: ParsableCommand {}

extension ArgumentlessCommand {
    mutating func take(_ argument: String) throws(UsageError) {
        throw Self.unexpectedArgument(argument)
    }
}
