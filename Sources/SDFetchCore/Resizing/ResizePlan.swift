/// The geometry of one resized copy, worked out from the (oriented) source size before
/// anything is decoded: the output size, the part of the source it shows, and the canvas
/// and offset of `pad`.
struct ResizePlan: Equatable {
    /// The resampled image.
    let width: Int
    let height: Int
    /// The part of the source shown, as fractions of its width and height (`crop` cuts the
    /// longer side), so it applies unchanged to a source decoded at a reduced scale.
    let box: (x: Double, y: Double, width: Double, height: Double)
    /// The output file's size: the resampled image, or the `pad` square around it.
    let canvasWidth: Int
    let canvasHeight: Int
    /// Output pixels per source pixel (over 1 when enlarging).
    let scale: Double

    init(sourceWidth: Int, sourceHeight: Int, options: ResizeOptions) {
        let target = Double(options.size)
        let (w, h) = (Double(sourceWidth), Double(sourceHeight))
        var box = (x: 0.0, y: 0.0, width: 1.0, height: 1.0)
        let scale: Double
        switch options.mode {
        case .longer, .pad: scale = target / max(w, h)
        case .shorter, .crop: scale = target / min(w, h)
        case .none: scale = 1
        }
        var width = max(1, Int((w * scale).rounded()))
        var height = max(1, Int((h * scale).rounded()))
        if options.mode == .crop {
            width = min(width, options.size)
            height = min(height, options.size)
            box.width = Double(width) / (w * scale)
            box.height = Double(height) / (h * scale)
            box.x = (1 - box.width) / 2
            box.y = (1 - box.height) / 2
        }
        if options.mode == .longer || options.mode == .pad {
            width = min(width, options.size)
            height = min(height, options.size)
        }
        self.width = width
        self.height = height
        self.box = box
        self.scale = scale
        canvasWidth = options.mode == .pad ? options.size : width
        canvasHeight = options.mode == .pad ? options.size : height
    }

    static func == (lhs: ResizePlan, rhs: ResizePlan) -> Bool {
        lhs.width == rhs.width && lhs.height == rhs.height && lhs.canvasWidth == rhs.canvasWidth
            && lhs.canvasHeight == rhs.canvasHeight && lhs.box == rhs.box
    }

    /// The box in pixels of a source whose whole image spans `width` x `height` pixels (a
    /// JPEG at a DCT scale; a box-shrunk image, whose span is fractional).
    func sourceBox(width sourceWidth: Double, height sourceHeight: Double) -> Resampler.Box {
        Resampler.Box(
            x: box.x * sourceWidth, y: box.y * sourceHeight, width: box.width * sourceWidth,
            height: box.height * sourceHeight)
    }
}
