import SDFetchCore

/// `-v`: prints the core's ``FetchNote``s on standard error, escaped like all network text.
enum VerboseNotes {
    /// A sink for ``Fetcher``'s notes writing `sdfetch: URL: MESSAGE` through `console`,
    /// which keeps the progress bar below the line.
    static func printer(_ console: Console) -> @Sendable (FetchNote) -> Void {
        { note in console.error(line(note)) }
    }

    static func line(_ note: FetchNote) -> String {
        "sdfetch: \(Escaping.terminal(note.url)): \(Escaping.terminal(note.message))\n"
    }
}
