import Anvil

/// MobileNet v2 (Sandler et al. 2018), as torchvision's `mobilenet_v2`.
///
/// A 3×3 stride-2 convolution, then 17 inverted-residual blocks — a 1×1 expansion (skipped
/// when the expansion factor is 1), a 3×3 depthwise convolution carrying the stride, and a
/// linear 1×1 projection, with a residual addition when the block keeps its shape — then a
/// 1×1 convolution to 1280 channels, global average pooling and the classifier: 3,504,872
/// parameters at 1000 classes. Every convolution is bias-free and followed by batch
/// normalization (epsilon 1e-5) and, except for the projections, ReLU6. Input: 224×224×3
/// RGB normalised with ImageNet's mean and standard deviation.
///
/// Layer names are torchvision's module paths with `.` replaced by `_`: the stem
/// `features_0_0` (convolution), `features_0_1` (batch norm), `features_0_2` (ReLU6); in
/// block N = 1...17 the units `features_N_conv_U_0/1/2` (expansion U = 0 and depthwise
/// U = 1, or only the depthwise U = 0 in block 1), the projection `features_N_conv_P` and
/// its batch norm `features_N_conv_P+1`, and the residual `features_N_add`; then
/// `features_18_0/1/2`, `avgpool` and `classifier_1`. Weights converted from a torchvision
/// state_dict by `Scripts/convert_pytorch.py` load by name with layout `.pytorch`.
public enum MobileNetV2 {
    /// torchvision's published parameter count for `mobilenet_v2`: 3,504,872.
    public static let publishedParameterCount = 3_504_872

    /// The blocks at width 1: expansion factor t, output channels c, repeats n, first stride s.
    public static let settings: [(expansion: Int, channels: Int, repeats: Int, stride: Int)] = [
        (1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1),
    ]

    /// torchvision's `_make_divisible`: `value` rounded to the nearest multiple of `divisor`,
    /// at least `divisor`, and raised by one `divisor` when rounding lost more than 10%.
    public static func divisible(_ value: Double, by divisor: Int = 8) -> Int {
        let rounded = max(divisor, Int(value + Double(divisor) / 2) / divisor * divisor)
        return Double(rounded) < 0.9 * value ? rounded + divisor : rounded
    }

    /// Builds MobileNet v2.
    ///
    /// - Parameters:
    ///   - classes: Outputs of `classifier_1`.
    ///   - width: torchvision's `width_mult`: every block's channels are `channels × width`
    ///     rounded to a multiple of 8 (``divisible(_:by:)``); the last convolution keeps
    ///     1280 channels below width 1 and grows above it.
    ///   - inputSize: Height and width of the input (the network ends with global pooling).
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(classes: Int = 1000, width: Double = 1, inputSize: Int = 224,
                             includeSoftmax: Bool = true) throws -> Model {
        try ZooSupport.check("MobileNetV2", classes: classes, width: width, inputSize: inputSize, minimumInputSize: 1)
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        var channels = divisible(32 * width)
        var x = ZooSupport.convNormActivation(input, "features_0", channels, kernel: 3, stride: 2, epsilon: 1e-5, activation: .relu6)
        var index = 1
        for setting in settings {
            let output = divisible(Double(setting.channels) * width)
            for repeat_ in 0 ..< setting.repeats {
                let stride = repeat_ == 0 ? setting.stride : 1
                x = invertedResidual(x, "features_\(index)", input: channels, output: output, stride: stride,
                                     expansion: setting.expansion)
                channels = output
                index += 1
            }
        }
        let last = divisible(1280 * max(1, width))
        let logits = ZooSupport.convNormActivation(x, "features_\(index)", last, kernel: 1, epsilon: 1e-5, activation: .relu6)
            --> GlobalAveragePooling(name: "avgpool")
            --> Dense(neurons: classes, name: "classifier_1")
        return try ZooSupport.model(input, logits, includeSoftmax: includeSoftmax)
    }

    /// torchvision's `InvertedResidual`.
    static func invertedResidual(_ x: SymbolicTensor, _ name: String, input: Int, output: Int, stride: Int,
                                 expansion: Int) -> SymbolicTensor {
        let hidden = Int((Double(input) * Double(expansion)).rounded())
        var y = x
        var unitIndex = 0
        if expansion != 1 {
            y = ZooSupport.convNormActivation(y, "\(name)_conv_0", hidden, kernel: 1, epsilon: 1e-5, activation: .relu6)
            unitIndex = 1
        }
        y = ZooSupport.convNormActivation(y, "\(name)_conv_\(unitIndex)", hidden, kernel: 3, stride: stride, depthwise: true,
                                          epsilon: 1e-5, activation: .relu6)
        y = y
            --> Convolution(kernel: (1, 1), channels: output, padding: .valid, useBias: false,
                            name: "\(name)_conv_\(unitIndex + 1)")
            --> BatchNormalization(epsilon: 1e-5, name: "\(name)_conv_\(unitIndex + 2)")
        guard stride == 1, input == output else { return y }
        return [x, y] --> Add(name: "\(name)_add")
    }
}
