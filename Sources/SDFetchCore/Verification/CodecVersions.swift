internal import CAvif
internal import CGIF
internal import CJPEG
internal import CPNG
internal import CWebP

/// Versions of the image libraries, for `--version` (as `curl -V` lists its libraries).
///
/// libpng, libwebp and libavif report the library actually loaded; libjpeg-turbo and giflib only say which
/// headers sdfetch was built with (neither has a run-time query), which on Debian is the
/// version the package `Depends` on.
enum CodecVersions {
    static var png: String {
        png_get_libpng_ver(nil).map { String(cString: $0) } ?? "unknown"
    }

    /// `LIBJPEG_TURBO_VERSION_NUMBER` is MMMmmmppp: 2001005 is 2.1.5.
    static var jpegTurbo: String {
        let number = Int(LIBJPEG_TURBO_VERSION_NUMBER)
        return "\(number / 1_000_000).\(number / 1000 % 1000).\(number % 1000)"
    }

    static var gif: String { "\(GIFLIB_MAJOR).\(GIFLIB_MINOR).\(GIFLIB_RELEASE)" }

    /// The loaded libwebp's decoder version, 0xMMmmpp: 0x010204 is 1.2.4.
    static var webp: String {
        let number = Int(WebPGetDecoderVersion())
        return "\(number >> 16).\(number >> 8 & 0xFF).\(number & 0xFF)"
    }

    /// The loaded libavif's version.
    static var avif: String { String(cString: avifVersion()) }
}
