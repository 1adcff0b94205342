import SDFetchCore

/// The fetch options about `-o` copies (README, "Resized copies") and the cache key's
/// query (README, "Signed URLs"), appended to the table in `FetchCommand+Options.swift`: the
/// same rows drive parsing, `--help`, the man page, the completions and the config file.
extension FetchCommand {
    private static let resizeDefaults = ResizeOptions(size: 0)
    private static let autoFormat = "auto"

    /// The copies' format: the one `-o FILE`'s extension names (`a.png` holds PNG bytes),
    /// else `--resize-format`'s, else ``ResizeOptions``'s (JPEG). A name asking for a
    /// format `--resize` does not write (`t.gif`), or for another one than
    /// `--resize-format`, is a usage error: the file would hold bytes its name denies.
    func resolvedResizeFormat() throws(UsageError) -> ResizeFormat {
        guard resize.size > 0, let file = outputFile, let named = OutputFileFormat.of(file) else {
            return resizeFormat ?? Self.resizeDefaults.format
        }
        let what = "-o \(Escaping.terminal(file)) names a \(named.rawValue.uppercased()) file"
        guard let written = OutputFileFormat.resizeFormat(for: named) else {
            throw UsageError("\(what), but --resize writes \(OutputFileFormat.writtenByResize): name the file so")
        }
        if let resizeFormat, resizeFormat != written {
            throw UsageError("\(what), but --resize-format is \(resizeFormat.rawValue)")
        }
        return written
    }

    static let resizeOptions: [OptionSpec<FetchCommand>] = [
        OptionSpec(
            "key-ignore-query", .value("PATTERN"),
            help: "query parameters matching the glob are left out of the cache key and still sent, repeatable"
        ) { command, value, name in
            guard !value.isEmpty, !value.contains("&" as Character), !value.contains("=" as Character) else {
                throw UsageError("option \(name) needs a parameter name or glob, e.g. 'X-Amz-*'")
            }
            command.options.keyQueryFilter = KeyQueryFilter(
                patterns: command.options.keyQueryFilter.patterns + [value])
        },
        OptionSpec(
            "resize", .value("SIZE"), help: "with -o, resized copies made from the cached originals, SIZE pixels"
        ) { command, value, name in
            command.resize.size = try ValueParsers.integer(value, option: name, in: 1...ResizeOptions.maxSize)
        },
        OptionSpec(
            "resize-mode", .value("MODE"),
            help: "what SIZE sizes: longer side, shorter side, crop or pad to a square, none",
            default: resizeDefaults.mode.rawValue, choices: ResizeMode.allCases.map(\.rawValue)
        ) { command, value, name in
            command.resize.mode = try ValueParsers.choice(value, option: name, of: ResizeMode.self)
        },
        OptionSpec(
            "resize-format", .value("FORMAT"),
            help: "copies' format: jpeg, png, webp, or auto (-o FILE's extension, else jpeg)",
            default: Self.autoFormat, choices: [Self.autoFormat] + ResizeFormat.allCases.map(\.rawValue)
        ) { command, value, name in
            command.resizeFormat =
                value == Self.autoFormat ? nil : try ValueParsers.choice(value, option: name, of: ResizeFormat.self)
        },
        OptionSpec(
            "resize-quality", .value("N"), help: "JPEG and WebP quality of resized copies, 1-100",
            default: "\(resizeDefaults.quality)"
        ) { command, value, name in
            command.resize.quality = try ValueParsers.integer(value, option: name, in: 1...100)
        },
        OptionSpec(
            "resize-background", .value("RRGGBB"),
            help: "colour of pad margins and under transparency in JPEG copies",
            default: ValueText.color(resizeDefaults.background)
        ) { command, value, name in
            command.resize.background = try ValueParsers.color(value, option: name)
        },
    ]
}
