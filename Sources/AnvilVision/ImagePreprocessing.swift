import Foundation

/// Turns a decoded photo into the NHWC float input of an ImageNet-style network.
///
/// ```swift
/// let photo = try Image(contentsOf: URL(fileURLWithPath: "cat.jpg"))
/// let input = try ImagePreprocessing.pytorch().preprocess(photo)   // 224 × 224 × 3 floats
/// let probabilities = try model.predict(Tensor(batch: 1, shape: model.inputShapes[0], values: input))
/// ```
///
/// The pipeline, in order:
///
/// 1. **Colour**: a grey image is replicated to R, G and B; an RGBA image is composited
///    over white by default, or has its alpha dropped (``alpha``, ``AlphaHandling``).
///    16-bit images keep their fractional levels (see ``Image``).
/// 2. **Resize** (``resize``): the shorter side to a length keeping the aspect ratio
///    (torchvision's `Resize(256)`), or to an exact size, or not at all; with ``filter``
///    (bilinear by default; both filters antialias when shrinking, as Pillow's do).
/// 3. **Centre crop** to ``width`` × ``height``, placed as torchvision's `CenterCrop`
///    (see ``Image/centerCropped(width:height:)``). Steps 2 and 3 compute only the
///    cropped pixels, with exactly the values a resize followed by a crop gives.
/// 4. **Clamp** to 0...255, as resizing an 8-bit image does (only Lanczos can leave that range).
/// 5. **Channel order** (``channelOrder``): RGB, or BGR for Caffe-trained networks.
/// 6. **Normalise**: `(sample × scale − mean[c]) / standardDeviation[c]`, with `sample`
///    in 0...255 and `mean`, `standardDeviation` given in the output channel order.
///
/// The result is `height × width × 3` floats, row-major HWC: one image of an NHWC batch.
/// Samples are not rounded to whole levels between steps, so values differ from an 8-bit
/// Pillow/torchvision pipeline by at most about half a level before normalisation.
///
/// The presets ``caffe(size:resizeShorterSide:)``, ``pytorch(size:resizeShorterSide:)`` and
/// ``inception(size:resizeShorterSide:)`` (or ``init(preset:size:)``) set every field; any
/// field can be changed afterwards.
public struct ImagePreprocessing: Sendable, Hashable {
    /// How step 2 resizes the image before the centre crop.
    public enum Resize: Sendable, Hashable {
        /// Scale so that the shorter side has this length, keeping the aspect ratio (the
        /// longer side is truncated, as in torchvision). It must be at least the crop size.
        case shorterSide(Int)
        /// Scale to exactly `width × height`, changing the aspect ratio if it differs (as
        /// Keras's `load_img(target_size:)` does). It must be at least the crop size.
        case exact(width: Int, height: Int)
        /// Do not resize: the crop is taken from the image as it is, which must be at least
        /// as large as the crop.
        case none
    }

    /// The order of the colour channels in the output.
    public enum ChannelOrder: String, Sendable, Hashable {
        /// Red, green, blue: PyTorch, TensorFlow and Keras networks.
        case rgb
        /// Blue, green, red: networks trained with Caffe (OpenCV's order).
        case bgr
    }

    /// Step 2: how the image is resized before cropping.
    public var resize: Resize
    /// Step 3: the width of the centre crop, which is the output's width.
    public var width: Int
    /// Step 3: the height of the centre crop, which is the output's height.
    public var height: Int
    /// Step 2: the resampling filter.
    public var filter: ResamplingFilter
    /// Step 1: what is done with an alpha channel (default: composite over white).
    public var alpha: AlphaHandling
    /// Step 5: the channel order of the output.
    public var channelOrder: ChannelOrder
    /// Step 6: the factor applied to samples in 0...255 before the mean is subtracted.
    public var scale: Float
    /// Step 6: the value subtracted from each channel after scaling, in output channel order.
    public var mean: [Float]
    /// Step 6: the divisor of each channel after the mean is subtracted, in output channel order.
    public var standardDeviation: [Float]

    /// Creates a pipeline from every setting; see the type's description for the steps.
    public init(resize: Resize, width: Int, height: Int, filter: ResamplingFilter = .bilinear,
                alpha: AlphaHandling = .compositeOverWhite, channelOrder: ChannelOrder = .rgb,
                scale: Float = 1, mean: [Float] = [0, 0, 0], standardDeviation: [Float] = [1, 1, 1]) {
        self.resize = resize
        self.width = width
        self.height = height
        self.filter = filter
        self.alpha = alpha
        self.channelOrder = channelOrder
        self.scale = scale
        self.mean = mean
        self.standardDeviation = standardDeviation
    }

    /// The number of floats ``preprocess(_:)`` returns per image: `height × width × 3`.
    public var valuesPerImage: Int { height * width * 3 }

    /// Reads the image at `url` and preprocesses it; see ``preprocess(_:)``.
    ///
    /// - Throws: any error of ``Image/init(contentsOf:)`` or ``preprocess(_:)``.
    public func preprocess(contentsOf url: URL) throws -> [Float] {
        try preprocess(Image(contentsOf: url))
    }

    /// The network input for `image`: `height × width × 3` floats, HWC, normalised.
    ///
    /// - Throws: ``VisionError`` `.invalidArgument` if the settings are inconsistent (a size
    ///   not positive, a resize smaller than the crop, `mean` or `standardDeviation` without
    ///   3 values, a zero or non-finite divisor) or, with ``Resize/none``, the image is smaller
    ///   than the crop; `.imageTooLarge` if the resized image would exceed
    ///   ``Image/maximumPixelCount``.
    public func preprocess(_ image: Image) throws -> [Float] {
        try validate()
        let rgb = image.rgb(alpha: alpha)
        let cropped = try resizedAndCropped(rgb)
        return normalised(cropped.pixels)
    }

    /// The inputs for several images, one after the other: an NHWC batch of
    /// `images.count × height × width × 3` floats.
    ///
    /// - Throws: as ``preprocess(_:)``, for the first image that fails.
    public func preprocess(_ images: [Image]) throws -> [Float] {
        var batch = [Float]()
        batch.reserveCapacity(images.count * valuesPerImage)
        for image in images { batch += try preprocess(image) }
        return batch
    }

    /// Checks the settings, throwing `.invalidArgument` naming the one at fault.
    public func validate() throws {
        func fail(_ message: String) -> VisionError { VisionError(.invalidArgument, source: "ImagePreprocessing", message: message) }
        guard width > 0, height > 0, width <= Image.maximumPixelCount / height else {
            throw fail("crop size \(width)×\(height) must be positive and at most \(Image.maximumPixelCount) pixels")
        }
        switch resize {
        case .shorterSide(let side):
            guard side >= max(width, height) else {
                throw fail("resizing the shorter side to \(side) leaves less than the \(width)×\(height) crop")
            }
        case .exact(let w, let h):
            guard w >= width, h >= height else { throw fail("resizing to \(w)×\(h) leaves less than the \(width)×\(height) crop") }
            guard w <= Image.maximumPixelCount / h else { throw fail("resize size \(w)×\(h) exceeds \(Image.maximumPixelCount) pixels") }
        case .none:
            break
        }
        guard mean.count == 3, standardDeviation.count == 3 else {
            throw fail("mean and standardDeviation need 3 values each (one per channel), got \(mean.count) and \(standardDeviation.count)")
        }
        guard scale.isFinite, mean.allSatisfy(\.isFinite),
              standardDeviation.allSatisfy({ $0.isFinite && $0 != 0 }) else {
            throw fail("scale, mean and standardDeviation must be finite and the standard deviations non-zero")
        }
    }

    /// Steps 2 and 3 on an RGB image.
    private func resizedAndCropped(_ image: Image) throws -> Image {
        let target: (width: Int, height: Int)
        switch resize {
        case .none:
            return try image.centerCropped(width: width, height: height)
        case .shorterSide(let side):
            target = try Image.sizeWithShorterSide(side, width: image.width, height: image.height, name: image.name)
        case .exact(let w, let h):
            target = (w, h)
        }
        try image.checkResize(target.width, target.height)
        let origin = try Image.centeredOrigin(crop: (width, height), in: target, name: image.name)
        if target.width == image.width && target.height == image.height {
            return try image.cropped(x: origin.x, y: origin.y, width: width, height: height)
        }
        return image.resampled(width: target.width, height: target.height, filter: filter,
                               columns: origin.x ..< origin.x + width, rows: origin.y ..< origin.y + height)
    }

    /// Steps 4 to 6 on HWC RGB samples.
    private func normalised(_ rgb: [Float]) -> [Float] {
        let source: [Int] = channelOrder == .rgb ? [0, 1, 2] : [2, 1, 0]
        let (scale, mean, deviation) = (self.scale, self.mean, self.standardDeviation)
        var out = [Float](repeating: 0, count: rgb.count)
        rgb.withUnsafeBufferPointer { p in
            out.withUnsafeMutableBufferPointer { o in
                var i = 0
                while i < p.count {
                    for c in 0 ..< 3 {
                        let v = min(max(p[i + source[c]], 0), 255)
                        o[i + c] = (v * scale - mean[c]) / deviation[c]
                    }
                    i += 3
                }
            }
        }
        return out
    }
}
