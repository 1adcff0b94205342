import SDFetchCore

/// `--name TEMPLATE`: how `-o` names files, from fields of the URL (README, "Output
/// files").
///
/// Fields: `{host}` (the key's host), `{path}` (the URL path's folders, each a folder
/// under DIR; only as a whole `/`-separated part), `{stem}` (the last segment without an
/// image extension), `{hash}` (8 hex digits of the key's digest) and `{ext}` (the sniffed
/// format's extension, with its dot). The default is `{stem}-{hash}{ext}`; a wget `-x`-like
/// mirror is `{host}/{path}/{stem}-{hash}{ext}`.
///
/// Guarantees, whatever the template: every part is made safe on its own (no `/`, no
/// control character, no leading `.`, so no `..`; at most ``OutputNamer/maxBytes`` bytes),
/// so nothing lands outside DIR; names depend on the URL alone, so re-runs and shards agree;
/// and a template without `{hash}` gets `-{hash}` before its extension (or at its end), since
/// two URLs could otherwise share a name and overwrite each other.
///
/// Folders never take a file's name: every file name holds the 8 hex digits of `{hash}`, and
/// no folder holds 8 hex digits in a row (a longer run gets a `_` after each 7th digit), so
/// `v-91926e22.png/e.png` cannot make a folder where `v.png?s=1.5` put its file. Depth is
/// bounded: `{path}` gives at most ``maxPathFolders`` folders, deeper ones are joined into
/// the last with `_`.
struct NameTemplate: Sendable, Equatable {
    enum Piece: Sendable, Equatable {
        case text(String)
        case host, stem, hash, ext
    }

    /// A part between slashes: `{path}` alone, or pieces.
    enum Part: Sendable, Equatable {
        case path
        case pieces([Piece])
    }

    let parts: [Part]

    /// Most folders `{path}` makes: 12 of at most ``OutputNamer/maxBytes`` bytes, with a host
    /// folder and the file, stay well under Linux's `PATH_MAX` (4096) below a short DIR.
    static let maxPathFolders = 12

    /// The default, as `--help` prints it.
    static let standardText = "{stem}-{hash}{ext}"
    static let standard = try! NameTemplate(parsing: standardText)

    /// - Throws: ``UsageError`` naming the problem (unknown field, `{path}` inside a part,
    ///   an empty template).
    init(parsing text: String, option: String = "--name") throws(UsageError) {
        var parts: [Part] = []
        for raw in text.split(separator: "/", omittingEmptySubsequences: true) {
            if raw == "{path}" {
                parts.append(.path)
                continue
            }
            var pieces: [Piece] = []
            var rest = Substring(raw)
            while let open = rest.firstIndex(of: "{") {
                if open > rest.startIndex { pieces.append(.text(String(rest[..<open]))) }
                guard let close = rest[open...].firstIndex(of: "}") else {
                    throw UsageError("option \(option): '\(Escaping.terminal(text))' has a '{' without '}'")
                }
                switch rest[rest.index(after: open)..<close] {
                case "host": pieces.append(.host)
                case "stem": pieces.append(.stem)
                case "hash": pieces.append(.hash)
                case "ext": pieces.append(.ext)
                case "path":
                    throw UsageError(
                        "option \(option): {path} must be a part of its own, as in {host}/{path}/{stem}{ext}")
                case let other:
                    throw UsageError(
                        "option \(option): unknown field {\(Escaping.terminal(other))} "
                            + "(fields: {host} {path} {stem} {hash} {ext})")
                }
                rest = rest[rest.index(after: close)...]
            }
            if !rest.isEmpty { pieces.append(.text(String(rest))) }
            parts.append(.pieces(pieces))
        }
        guard case .pieces(var last)? = parts.last else {
            throw UsageError(
                "option \(option): '\(Escaping.terminal(text))' names no file (it must end with a file name part)")
        }
        let hasHash = parts.contains { if case .pieces(let pieces) = $0 { pieces.contains(.hash) } else { false } }
        if !hasHash {
            let position = last.lastIndex(of: .ext) ?? last.endIndex
            last.insert(contentsOf: [.text("-"), .hash], at: position)
            parts[parts.count - 1] = .pieces(last)
        }
        self.parts = parts
    }

    /// The path, relative to DIR, of `key`'s image of `format`: parts joined by `/`, each safe.
    func render(_ key: URLKey, format: ImageFormat?) -> String {
        // The default is every warm hit's name under -o: its own, allocation-light path.
        if self == Self.standard { return OutputNamer.name(for: key, format: format) }
        let hasPath = parts.contains(.path)
        let segments = hasPath ? OutputNamer.pathSegments(of: key.string) : [OutputNamer.lastSegment(of: key.string)]
        let stem = OutputNamer.stem(of: segments.last ?? "")
        var rendered: [String] = []
        for (index, part) in parts.enumerated() {
            switch part {
            case .path:
                var folders = segments.dropLast().map { OutputNamer.percentDecode($0) }
                if folders.count > Self.maxPathFolders {
                    let deeper = folders[(Self.maxPathFolders - 1)...].joined(separator: "_")
                    folders = Array(folders[..<(Self.maxPathFolders - 1)]) + [deeper]
                }
                rendered += folders.map { OutputNamer.safePart($0, limit: OutputNamer.maxBytes) }
            case .pieces(let pieces):
                let isFile = index == parts.count - 1
                // Fixed pieces first: the stem is what gives way when the name is too long.
                let fixed = pieces.map { piece -> String in
                    switch piece {
                    case .text(let text): text
                    case .host: key.host
                    case .hash: key.digest.shortHex
                    case .ext: isFile ? (format?.fileExtension ?? "") : ""
                    case .stem: ""
                    }
                }
                let room = OutputNamer.maxBytes - fixed.reduce(0) { $0 + $1.utf8.count }
                let stemText = OutputNamer.truncate(OutputNamer.sanitise(stem), toBytes: max(0, room))
                let text = zip(pieces, fixed).map { piece, value in piece == .stem ? stemText : value }.joined()
                rendered.append(OutputNamer.safePart(text, limit: OutputNamer.maxBytes))
            }
        }
        for index in rendered.indices.dropLast() { rendered[index] = Self.breakingHexRuns(rendered[index]) }
        return rendered.joined(separator: "/")
    }

    /// `text` with a `_` after every 7th of consecutive lower-case hex digits, so a folder
    /// never holds the 8 that every file name has (see the type's comment).
    static func breakingHexRuns(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var run = 0
        for scalar in text.unicodeScalars {
            let isHex = ("0"..."9").contains(scalar) || ("a"..."f").contains(scalar)
            if isHex, run == 7 {
                out.append("_")
                run = 0
            }
            run = isHex ? run + 1 : 0
            out.append(scalar)
        }
        return String(out)
    }
}
