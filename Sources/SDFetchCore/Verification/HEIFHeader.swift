/// Reads the size of a HEIF or AVIF image from its item properties, without decoding.
///
/// HEIF (ISO/IEC 23008-12) describes images as items inside `meta`: `pitm` names the
/// primary item, `iprp` > `ipco` lists properties, and `iprp` > `ipma` links items to
/// them by 1-based index. The primary item's `ispe` property holds its 32-bit width and
/// height (6.5.3). The primary may be a grid or an identity-derived item whose coded
/// tiles are larger (an encoder pads an 8x6 picture to a 64x64 coding block), so the
/// coded tiles' `ispe` are not the answer. When the links are missing the largest
/// declared `ispe` is reported: never smaller than the real image, so `--max-pixels`
/// stays a true bound. Nil when no `ispe` is found: this cheap walk reads no further,
/// and that is not corruption.
enum HEIFHeader {
    static func size(_ view: ByteView) -> PixelSize? {
        guard let meta = ISOBox.first("meta", in: view, range: 0..<view.count),
            // `meta` is a full box: a version byte and 3 flag bytes precede its children.
            meta.payload.count >= 4
        else { return nil }
        let children = ISOBox.boxes(in: view, range: meta.payload.lowerBound + 4..<meta.payload.upperBound)
        guard let properties = children.first(where: { $0.type == "iprp" }) else { return nil }
        let propertyBoxes = ISOBox.boxes(in: view, range: properties.payload)
        guard let container = propertyBoxes.first(where: { $0.type == "ipco" }) else { return nil }
        let items = ISOBox.boxes(in: view, range: container.payload)
        let sizes = items.map { $0.type == "ispe" ? spatialExtent(view, $0) : nil }
        if let primary = children.first(where: { $0.type == "pitm" }).flatMap({ primaryItem(view, $0) }),
            let links = propertyBoxes.first(where: { $0.type == "ipma" }),
            let indices = associations(view, links, item: primary)
        {
            // Property indices are 1-based; 0 means "no property".
            if let size = indices.lazy.compactMap({ $0 >= 1 && $0 <= sizes.count ? sizes[$0 - 1] : nil }).first {
                return size
            }
        }
        return sizes.compactMap { $0 }.max { ($0.pixelCount ?? .max) < ($1.pixelCount ?? .max) }
    }

    /// `ispe`: full box (version and flags), then width and height.
    private static func spatialExtent(_ view: ByteView, _ box: ISOBox) -> PixelSize? {
        guard box.payload.count >= 12, let width = view.uint32(at: box.payload.lowerBound + 4, bigEndian: true),
            let height = view.uint32(at: box.payload.lowerBound + 8, bigEndian: true)
        else { return nil }
        return PixelSize(width: width, height: height)
    }

    /// `pitm`: full box, then the item ID in 16 bits (version 0) or 32 bits.
    private static func primaryItem(_ view: ByteView, _ box: ISOBox) -> UInt32? {
        let start = box.payload.lowerBound
        guard let version = view.uint8(at: start) else { return nil }
        return version == 0
            ? view.uint16(at: start + 4, bigEndian: true).map(UInt32.init) : view.uint32(at: start + 4, bigEndian: true)
    }

    /// `ipma`: full box; entry count; per entry the item ID (16 bits in version 0, else 32),
    /// an association count and that many property indices, 7 bits each, or 15 bits when
    /// flag bit 0 is set (the top bit marks the property essential).
    private static func associations(_ view: ByteView, _ box: ISOBox, item: UInt32) -> [Int]? {
        var offset = box.payload.lowerBound
        guard let version = view.uint8(at: offset), let flags = view.uint8(at: offset + 3),
            let entryCount = view.uint32(at: offset + 4, bigEndian: true)
        else { return nil }
        offset += 8
        let wideIndices = flags & 1 == 1
        for _ in 0..<entryCount {
            let id: UInt32?
            if version == 0 {
                id = view.uint16(at: offset, bigEndian: true).map(UInt32.init)
                offset += 2
            } else {
                id = view.uint32(at: offset, bigEndian: true)
                offset += 4
            }
            guard let id, let count = view.uint8(at: offset), offset < box.payload.upperBound else { return nil }
            offset += 1
            var indices: [Int] = []
            for _ in 0..<count {
                if wideIndices {
                    guard let value = view.uint16(at: offset, bigEndian: true) else { return nil }
                    indices.append(Int(value & 0x7FFF))
                    offset += 2
                } else {
                    guard let value = view.uint8(at: offset) else { return nil }
                    indices.append(Int(value & 0x7F))
                    offset += 1
                }
            }
            if id == item { return indices }
        }
        return nil
    }
}
