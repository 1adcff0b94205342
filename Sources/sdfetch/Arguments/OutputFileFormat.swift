import SDFetchCore

/// The image format an output name's extension names (`t.gif`: GIF), so `-o FILE` gets
/// what its name asks for: ``FetchCommand/resolvedResizeFormat()`` converts to it, a name
/// asking for a format `--resize` cannot write is a usage error, and an original written
/// under another format's name is a warning (``EventConsumer``).
enum OutputFileFormat {
    /// The format `name`'s extension names, any case; nil for no extension or another one.
    static func of(_ name: String) -> ImageFormat? {
        let lowered = URLArgument.fileName(of: name).lowercased()
        guard let dot = lowered.lastIndex(of: "."), dot != lowered.startIndex else { return nil }
        let suffix = String(lowered[dot...])
        if let spelling = otherSpellings[suffix] { return spelling }
        return ImageFormat.allCases.first { $0.fileExtension == suffix }
    }

    /// Extensions in use beside each format's own (``ImageFormat/fileExtension``).
    private static let otherSpellings: [String: ImageFormat] = [
        ".jpeg": .jpeg, ".jpe": .jpeg, ".tif": .tiff, ".heics": .heic,
    ]

    /// The format `--resize` writes for `format`, nil when it writes none of that kind.
    static func resizeFormat(for format: ImageFormat) -> ResizeFormat? {
        ResizeFormat.allCases.first { $0.imageFormat == format }
    }

    /// The formats `--resize` writes, for messages: "JPEG, PNG or WebP".
    static let writtenByResize = "JPEG (.jpg), PNG (.png) or WebP (.webp)"
}
