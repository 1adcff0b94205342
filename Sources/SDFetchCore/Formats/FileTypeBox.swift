/// Reads the `ftyp` box that opens a HEIF or AVIF file and names its format by brand.
///
/// The brands are four-character codes registered with the MP4 registration authority:
/// HEIF (ISO/IEC 23008-12, Annex B) defines `heic`/`heix`/`heim`/`heis` for HEVC images and
/// `hevc`/`hevx`/`hevm`/`hevs` for HEVC sequences, `mif1`/`msf1` for generic image and
/// sequence files; AV1 Image File Format (AOM AVIF 1.0, section 6) defines `avif`/`avis`.
/// An MP4 video (`isom`, `mp42`) has an `ftyp` box too and is not an image.
enum FileTypeBox {
    private static let avifBrands: Set<String> = ["avif", "avis"]
    private static let heicBrands: Set<String> = ["heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs"]
    private static let heifBrands: Set<String> = ["mif1", "msf1", "mif2"]

    /// The format named by the brands, or nil when the data does not open with an
    /// image `ftyp` box.
    ///
    /// A specific major brand wins. Many encoders write the generic `mif1` as the major
    /// brand and put `avif` or `heic` among the compatible brands, so those are consulted
    /// next; a file that is only `mif1`/`msf1` is plain HEIF.
    static func format(of view: ByteView) -> ImageFormat? {
        guard view.matches("ftyp", at: 4), let size = view.uint32(at: 0, bigEndian: true), size >= 16,
            view.contains(8, length: 8)
        else { return nil }
        let major = brand(in: view, at: 8)
        if avifBrands.contains(major) { return .avif }
        if heicBrands.contains(major) { return .heic }
        var compatible: [String] = []
        var offset = 16
        while offset + 4 <= Int(size), view.contains(offset, length: 4) {
            compatible.append(brand(in: view, at: offset))
            offset += 4
        }
        if compatible.contains(where: avifBrands.contains) { return .avif }
        if compatible.contains(where: heicBrands.contains) { return .heic }
        if heifBrands.contains(major) || compatible.contains(where: heifBrands.contains) { return .heif }
        return nil
    }

    private static func brand(in view: ByteView, at offset: Int) -> String {
        String(decoding: view.bytes[offset..<offset + 4], as: UTF8.self)
    }
}
