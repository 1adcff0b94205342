internal import CWebP

/// A WebP's pixels through libwebp: a still image straight into our buffer (RGBA when it
/// has alpha, else RGB), an animation's first frame through ``WebPAnimation``. The canvas
/// meets `--max-pixels` before any buffer exists. Stateless; safe from any thread.
enum WebPPixels {
    static func decode(_ bytes: [UInt8], maxPixels: Int64) -> Result<Pixels, FetchFailure> {
        bytes.withUnsafeBufferPointer { data -> Result<Pixels, FetchFailure> in
            let features: WebPBitstreamFeatures
            switch WebPVerifier.canvas(of: data, maxPixels: maxPixels) {
            case .success(let found): features = found
            case .failure(let failure): return .failure(failure)
            }
            let (width, height) = (Int(features.width), Int(features.height))
            if features.has_animation != 0 {
                var first: [UInt8]?
                let decoded = WebPAnimation.decodeFrames(data, maxPixels: maxPixels) { canvas in
                    first = Array(canvas)
                    return false
                }
                if case .failure(let failure) = decoded { return .failure(failure) }
                guard let first else { return .failure(.decodeFailed("webp", "animation has no frame")) }
                return .success(Pixels(width: width, height: height, channels: 4, data: first))
            }
            let channels = features.has_alpha != 0 ? 4 : 3
            var pixels = [UInt8](repeating: 0, count: width * height * channels)
            let decoded = pixels.withUnsafeMutableBufferPointer { out in
                channels == 4
                    ? WebPDecodeRGBAInto(data.baseAddress, data.count, out.baseAddress, out.count, Int32(width * 4))
                    : WebPDecodeRGBInto(data.baseAddress, data.count, out.baseAddress, out.count, Int32(width * 3))
            }
            guard decoded != nil else { return .failure(.decodeFailed("webp", "bitstream undecodable")) }
            return .success(Pixels(width: width, height: height, channels: channels, data: pixels))
        }
    }
}
