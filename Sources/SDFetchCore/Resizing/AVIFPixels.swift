internal import CAvif

/// An AVIF's pixels through libavif (opened by ``AVIFFile``): its first image converted to
/// 8-bit RGB, or RGBA when it has alpha, then turned as its `irot` and `imir` properties say
/// (rotation first, then the mirror, the order HEIF gives them). Exif orientation is not
/// read for AVIF: HEIF makes those properties the orientation, and browsers follow them.
/// The ``PixelLease`` takes the decoder's planes and the RGB image before either exists.
/// Stateless; safe from any thread; blocks for the decode (and for the budget).
enum AVIFPixels {
    static func decode(_ bytes: [UInt8], maxPixels: Int64, lease: PixelLease) -> Result<Pixels, FetchFailure> {
        AVIFFile.open(bytes, maxPixels: maxPixels) { decoder, size in
            // The YUV planes and the RGB copy, about a pixel's worth each.
            lease.take(2 * Int64(size.width) * Int64(size.height))
            let result = avifDecoderNextImage(decoder)
            guard result == AVIF_RESULT_OK, let image = decoder.pointee.image else {
                return .failure(AVIFFile.failure(result))
            }
            // A sequence's frame may differ from the container's declared size.
            guard Int(image.pointee.width) == size.width, Int(image.pointee.height) == size.height else {
                return .failure(.decodeFailed("avif", "image size differs from the declared size"))
            }
            let channels = image.pointee.alphaPlane != nil ? 4 : 3
            var rgb = avifRGBImage()
            avifRGBImageSetDefaults(&rgb, image)
            rgb.format = channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
            rgb.depth = 8
            var data = [UInt8](repeating: 0, count: size.width * size.height * channels)
            let converted = data.withUnsafeMutableBufferPointer { out in
                rgb.pixels = out.baseAddress
                rgb.rowBytes = UInt32(size.width * channels)
                return avifImageYUVToRGB(image, &rgb)
            }
            guard converted == AVIF_RESULT_OK else { return .failure(AVIFFile.failure(converted)) }
            var pixels = Pixels(width: size.width, height: size.height, channels: channels, data: data)
            let flags = image.pointee.transformFlags
            if flags & avifTransformFlags(AVIF_TRANSFORM_IROT.rawValue) != 0 {
                pixels = pixels.oriented(rotation(anticlockwiseQuarters: image.pointee.irot.angle))
            }
            if flags & avifTransformFlags(AVIF_TRANSFORM_IMIR.rawValue) != 0 {
                // Mode 0 exchanges top and bottom (Exif 4), mode 1 left and right (Exif 2).
                pixels = pixels.oriented(image.pointee.imir.mode == 0 ? .upsideDownMirrored : .mirrored)
            }
            return .success(pixels)
        }
    }

    /// The Exif orientation that turns the stored pixels as `irot` says: `angle` quarter
    /// turns anticlockwise.
    static func rotation(anticlockwiseQuarters angle: UInt8) -> ExifOrientation {
        switch angle & 3 {
        case 1: .left
        case 2: .upsideDown
        case 3: .right
        default: .up
        }
    }
}
