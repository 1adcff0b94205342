extension ImageFormat {
    /// Recognises the format from the leading bytes only; nil means `not-an-image`.
    ///
    /// Never consults `Content-Type` or a file extension
    /// (<doc:Verification#Format-sniffing>): an HTML error page served as `image/png` is
    /// still HTML. Binary signatures are tried first, then ISO BMFF `ftyp` brands, then
    /// the SVG text sniff. Data shorter than a signature does not match it.
    public static func sniff(_ bytes: some Collection<UInt8>) -> ImageFormat? {
        let head = Array(bytes.prefix(SVGSniffer.window))
        if let signature = ImageSignature.all.first(where: { $0.matches(head.prefix(ImageSignature.longestPattern)) }) {
            return signature.format
        }
        if let format = FileTypeBox.format(of: ByteView(head)) {
            return format
        }
        if SVGSniffer.rootElement(in: head) != nil {
            return .svg
        }
        return nil
    }
}
