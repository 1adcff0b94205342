import Foundation

/// The README's fenced code blocks, so a test runs a recipe as a reader pastes it: a
/// change to the README's text is a change to what the test runs.
enum ReadmeBlocks {
    /// The README at the repository's root.
    static func text(file: String = #filePath) throws -> String {
        let root = URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    /// The body of every fenced block whose first line is `firstLine` (the comment that
    /// names it, e.g. `# GitLab CI`), fences left out.
    static func blocks(startingWith firstLine: String) throws -> [String] {
        var found: [String] = []
        var current: [Substring]?
        for line in try text().split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let lines = current {
                    if lines.first.map(String.init) == firstLine { found.append(lines.joined(separator: "\n")) }
                    current = nil
                } else {
                    current = []
                }
            } else {
                current?.append(line)
            }
        }
        return found
    }

    /// The one block starting with `firstLine` that contains `marker`.
    static func block(startingWith firstLine: String, containing marker: String = "") throws -> String {
        let found = try blocks(startingWith: firstLine).filter { marker.isEmpty || $0.contains(marker) }
        guard found.count == 1 else {
            throw ReadmeError("\(found.count) README blocks start with '\(firstLine)' and contain '\(marker)'")
        }
        return found[0]
    }

    /// The command of `block`'s line that runs sdfetch, from `sdfetch` to the line's end
    /// (a YAML `- run: ` or a crontab's schedule left out), for `sh -c`.
    static func sdfetchLine(in block: String) throws -> String {
        guard let line = block.split(separator: "\n").first(where: { $0.contains("sdfetch ") }),
            let start = line.range(of: "sdfetch ")
        else { throw ReadmeError("no sdfetch line in:\n\(block)") }
        return String(line[start.lowerBound...])
    }
}

struct ReadmeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
