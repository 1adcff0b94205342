extension ImageResizer {
    /// The resized copy of `bytes`, carrying the mark (``ResizedCopySeal``) that lets a
    /// later run with the same options find it made: `originalSHA256` is the cache entry's
    /// digest of `bytes`.
    public func resize(_ bytes: [UInt8], originalSHA256: String) -> Result<ResizedImage, FetchFailure> {
        resize(bytes).map { copy in
            let sealed = ResizedCopySeal(options: options, originalSHA256: originalSHA256)
                .sealing(copy.bytes, as: copy.format)
            return ResizedImage(bytes: sealed, width: copy.width, height: copy.height, format: copy.format)
        }
    }

    /// Whether `file` (an `-o` file found where this copy goes) already is the copy these
    /// options make of the original whose SHA-256 is `originalSHA256`: then nothing need be
    /// read, decoded or written (README, "Resized copies").
    public func isCopy(_ file: [UInt8], ofOriginal originalSHA256: String) -> Bool {
        ResizedCopySeal(options: options, originalSHA256: originalSHA256).isSealed(file, as: options.format)
    }
}
