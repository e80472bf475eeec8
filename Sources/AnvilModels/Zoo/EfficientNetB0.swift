import Anvil

/// EfficientNet-B0 (Tan and Le 2019), as torchvision's `efficientnet_b0`.
///
/// A 3×3 stride-2 convolution with SiLU, then seven stages of MBConv blocks (1, 2, 2, 3, 3,
/// 4 and 1 blocks; the first block of a stage carries its stride) — a 1×1 expansion by 6
/// (skipped in stage 1, whose factor is 1), a 3×3 or 5×5 depthwise convolution, a
/// squeeze-and-excitation gate, and a linear 1×1 projection, with a residual addition when
/// the block keeps its shape — then a 1×1 convolution to 1280 channels with SiLU, global
/// average pooling and the classifier: 5,288,548 parameters at 1000 classes. Convolutions
/// other than the gate's are bias-free and followed by batch normalization (epsilon 1e-5);
/// every activation is SiLU (`x · sigmoid(x)`). The gate is global average pooling, a 1×1
/// convolution to a quarter of the block's input channels with SiLU, a 1×1 convolution back
/// with sigmoid, and an ``Elementwise`` multiply of the `1 × 1 × C` gate with the feature
/// map. Input: 224×224×3 RGB normalised with ImageNet's mean and standard deviation.
///
/// Layer names are torchvision's module paths with `.` replaced by `_`: the stem
/// `features_0_0/1/2`; in block B of stage S the units `features_S_B_block_U_0/1/2`
/// (expansion, depthwise, projection without activation), the gate
/// `features_S_B_block_U_avgpool`, `_fc1`, `_activation`, `_fc2`, `_scale_activation` and
/// `_mul`, and the residual `features_S_B_add`; then `features_8_0/1/2`, `avgpool` and
/// `classifier_1`. Stochastic depth is the identity at inference. Weights converted from a
/// torchvision state_dict by `Scripts/convert_pytorch.py` load by name with layout `.pytorch`.
public enum EfficientNetB0 {
    /// torchvision's published parameter count for `efficientnet_b0`: 5,288,548.
    public static let publishedParameterCount = 5_288_548

    /// The stages at width 1: expansion factor, depthwise kernel, first stride, input and
    /// output channels, blocks.
    public static let stages: [(expansion: Int, kernel: Int, stride: Int, input: Int, output: Int, blocks: Int)] = [
        (1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
        (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1),
    ]

    /// Builds EfficientNet-B0.
    ///
    /// - Parameters:
    ///   - classes: Outputs of `classifier_1`.
    ///   - width: torchvision's `width_mult`: every stage's channels are `channels × width`
    ///     rounded to a multiple of 8 (``MobileNetV2/divisible(_:by:)``); the last convolution
    ///     has four times the last stage's. 1 is EfficientNet-B0.
    ///   - inputSize: Height and width of the input (the network ends with global pooling).
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(classes: Int = 1000, width: Double = 1, inputSize: Int = 224,
                             includeSoftmax: Bool = true) throws -> Model {
        try ZooSupport.check("EfficientNetB0", classes: classes, width: width, inputSize: inputSize, minimumInputSize: 1)
        let adjust = { (channels: Int) in MobileNetV2.divisible(Double(channels) * width) }
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        var x = ZooSupport.convNormActivation(input, "features_0", adjust(stages[0].input), kernel: 3, stride: 2, epsilon: 1e-5,
                                 activation: .silu)
        for (index, stage) in stages.enumerated() {
            var channels = adjust(stage.input)
            for block in 0 ..< stage.blocks {
                x = mbConv(x, "features_\(index + 1)_\(block)", input: channels, output: adjust(stage.output),
                           expansion: stage.expansion, kernel: stage.kernel, stride: block == 0 ? stage.stride : 1)
                channels = adjust(stage.output)
            }
        }
        let logits = ZooSupport.convNormActivation(x, "features_8", 4 * adjust(stages[stages.count - 1].output), kernel: 1,
                                      epsilon: 1e-5, activation: .silu)
            --> GlobalAveragePooling(name: "avgpool")
            --> Dense(neurons: classes, name: "classifier_1")
        return try ZooSupport.model(input, logits, includeSoftmax: includeSoftmax)
    }

    /// torchvision's `MBConv`.
    static func mbConv(_ x: SymbolicTensor, _ name: String, input: Int, output: Int, expansion: Int, kernel: Int,
                       stride: Int) -> SymbolicTensor {
        let expanded = MobileNetV2.divisible(Double(input * expansion))
        var y = x
        var unitIndex = 0
        if expanded != input {
            y = ZooSupport.convNormActivation(y, "\(name)_block_0", expanded, kernel: 1, epsilon: 1e-5, activation: .silu)
            unitIndex += 1
        }
        y = ZooSupport.convNormActivation(y, "\(name)_block_\(unitIndex)", expanded, kernel: kernel, stride: stride, depthwise: true,
                             epsilon: 1e-5, activation: .silu)
        unitIndex += 1
        y = MobileNetV3.squeezeExcitation(y, "\(name)_block_\(unitIndex)", channels: expanded, squeezed: max(1, input / 4),
                                          activation: .silu, gate: .sigmoid)
        unitIndex += 1
        y = ZooSupport.convNormActivation(y, "\(name)_block_\(unitIndex)", output, kernel: 1, epsilon: 1e-5, activation: nil)
        guard stride == 1, input == output else { return y }
        return [y, x] --> Add(name: "\(name)_add")
    }
}
