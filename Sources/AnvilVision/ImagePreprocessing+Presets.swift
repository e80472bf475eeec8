import Foundation

extension ImagePreprocessing {
    /// The three standard ways ImageNet networks expect their input.
    public enum Preset: String, Sendable, Hashable, CaseIterable {
        /// ``ImagePreprocessing/caffe(size:resizeShorterSide:)``: BGR, 0...255, mean subtracted.
        case caffe
        /// ``ImagePreprocessing/pytorch(size:resizeShorterSide:)``: RGB / 255, ImageNet mean and std.
        case pytorch
        /// ``ImagePreprocessing/inception(size:resizeShorterSide:)``: RGB scaled to −1...1.
        case inception

        /// The size of the square input networks trained this way usually take: 224, or 299 for Inception.
        public var defaultSize: Int { self == .inception ? 299 : 224 }
    }

    /// The fraction of the resized image's shorter side the centre crop keeps by default:
    /// 0.875 (224 of 256, 299 of 342), the ImageNet evaluation convention.
    public static let defaultCropFraction = 0.875

    /// The shorter side a `size` crop is taken from by default: `round(size / 0.875)`
    /// (224 → 256, 299 → 342).
    public static func defaultResize(forCrop size: Int) -> Int {
        Int((Double(size) / defaultCropFraction).rounded())
    }

    /// The preset's pipeline for a `size × size` input (default: the preset's own size).
    public init(preset: Preset, size: Int? = nil) {
        let size = size ?? preset.defaultSize
        switch preset {
        case .caffe: self = .caffe(size: size)
        case .pytorch: self = .pytorch(size: size)
        case .inception: self = .inception(size: size)
        }
    }

    /// Caffe / VGG (the original VGG16 and ResNet Caffe models, Keras's `"caffe"` mode): the
    /// shorter side resized to `resizeShorterSide` (default `round(size / 0.875)`, 256 for
    /// 224), a `size × size` centre crop, channels in **BGR** order, samples in 0...255 minus
    /// the per-channel ImageNet means B 103.939, G 116.779, R 123.68 (no scaling).
    public static func caffe(size: Int = 224, resizeShorterSide: Int? = nil) -> ImagePreprocessing {
        ImagePreprocessing(resize: .shorterSide(resizeShorterSide ?? defaultResize(forCrop: size)), width: size, height: size,
                           channelOrder: .bgr, scale: 1, mean: [103.939, 116.779, 123.68], standardDeviation: [1, 1, 1])
    }

    /// PyTorch / torchvision (`Resize(256)`, `CenterCrop(224)`, `ToTensor()`,
    /// `Normalize(mean, std)`): the shorter side resized to `resizeShorterSide` (default
    /// `round(size / 0.875)`, 256 for 224), a `size × size` centre crop, RGB divided by 255,
    /// then `(x − mean) / std` with mean 0.485, 0.456, 0.406 and std 0.229, 0.224, 0.225.
    public static func pytorch(size: Int = 224, resizeShorterSide: Int? = nil) -> ImagePreprocessing {
        ImagePreprocessing(resize: .shorterSide(resizeShorterSide ?? defaultResize(forCrop: size)), width: size, height: size,
                           channelOrder: .rgb, scale: 1 / 255, mean: [0.485, 0.456, 0.406],
                           standardDeviation: [0.229, 0.224, 0.225])
    }

    /// Inception / TensorFlow (Inception-v3, MobileNet from Keras, torchvision's Inception-v3
    /// with `transform_input`): the shorter side resized to `resizeShorterSide` (default
    /// `round(size / 0.875)`, 342 for 299), a `size × size` centre crop, RGB mapped to
    /// −1...1 as `x / 127.5 − 1`.
    public static func inception(size: Int = 299, resizeShorterSide: Int? = nil) -> ImagePreprocessing {
        ImagePreprocessing(resize: .shorterSide(resizeShorterSide ?? defaultResize(forCrop: size)), width: size, height: size,
                           channelOrder: .rgb, scale: 1 / 127.5, mean: [1, 1, 1], standardDeviation: [1, 1, 1])
    }

    /// A one-line account of the pipeline, for logs and command-line output, e.g.
    /// `"shorter side 256 (bilinear), centre crop 224×224, RGB, (x/255 − mean) / std"`.
    public var summary: String {
        var parts: [String] = []
        switch resize {
        case .shorterSide(let side): parts.append("shorter side \(side) (\(filter.rawValue))")
        case .exact(let w, let h): parts.append("resize \(w)×\(h) (\(filter.rawValue))")
        case .none: break
        }
        parts.append("centre crop \(width)×\(height)")
        parts.append(channelOrder == .rgb ? "RGB" : "BGR")
        func number(_ v: Float) -> String {
            let d = Double(v)
            return d == d.rounded() && abs(d) < 1e6 ? String(Int(d)) : String(format: "%g", d)
        }
        let scaled = scale == 1 ? "x" : (scale != 0 && abs(scale) < 1
                                         ? "x/" + String(format: "%g", 1 / Double(scale)) : "x×\(number(scale))")
        let means = mean.map(number).joined(separator: ", ")
        let deviations = standardDeviation.map(number).joined(separator: ", ")
        if standardDeviation.allSatisfy({ $0 == 1 }) {
            parts.append(mean.allSatisfy({ $0 == 0 }) ? scaled : "\(scaled) − (\(means))")
        } else {
            parts.append("(\(scaled) − (\(means))) / (\(deviations))")
        }
        switch alpha {
        case .drop: parts.append("alpha dropped")
        case .composite(let background): if background != 255 { parts.append("alpha over \(number(background))") }
        }
        return parts.joined(separator: ", ")
    }
}
