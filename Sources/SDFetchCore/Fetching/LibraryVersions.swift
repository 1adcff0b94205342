/// The C libraries sdfetch runs on and their versions, for `sdfetch --version`.
public enum LibraryVersions {
    /// `(name, version)` in a fixed order: libcurl, libpng, libjpeg-turbo, giflib, libwebp, libavif.
    public static var all: [(name: String, version: String)] {
        [
            ("libcurl", CurlEngine.libraryVersion),
            ("libpng", CodecVersions.png),
            ("libjpeg-turbo", CodecVersions.jpegTurbo),
            ("giflib", CodecVersions.gif),
            ("libwebp", CodecVersions.webp),
            ("libavif", CodecVersions.avif),
        ]
    }
}
