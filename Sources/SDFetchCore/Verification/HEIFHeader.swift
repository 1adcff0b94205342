/// Reads the size of a HEIF or AVIF image from its item properties, without decoding.
///
/// HEIF (ISO/IEC 23008-12, 6.5.3) gives every image item an `ispe` property holding
/// 32-bit width and height, inside `meta` > `iprp` > `ipco`. Finding which `ispe` belongs
/// to the primary item needs the `ipma` associations; instead the largest declared size is
/// reported, which is the primary image (or its grid) in practice and can only be larger
/// than it, so `--max-pixels` stays a true bound. Nil when no `ispe` is found: the
/// format's header was read as far as this cheap walk goes, and that is not corruption.
enum HEIFHeader {
    static func size(_ view: ByteView) -> PixelSize? {
        guard let meta = ISOBox.first("meta", in: view, range: 0..<view.count),
            // `meta` is a full box: a version byte and 3 flag bytes precede its children.
            meta.payload.count >= 4,
            let properties = ISOBox.first("iprp", in: view, range: meta.payload.lowerBound + 4..<meta.payload.upperBound),
            let container = ISOBox.first("ipco", in: view, range: properties.payload)
        else { return nil }
        var largest: PixelSize?
        for box in ISOBox.boxes(in: view, range: container.payload) where box.type == "ispe" {
            // `ispe` is a full box too: version and flags, then width and height.
            guard box.payload.count >= 12, let width = view.uint32(at: box.payload.lowerBound + 4, bigEndian: true),
                let height = view.uint32(at: box.payload.lowerBound + 8, bigEndian: true)
            else { continue }
            let size = PixelSize(width: width, height: height)
            if (size.pixelCount ?? .max) > (largest?.pixelCount ?? -1) { largest = size }
        }
        return largest
    }
}
