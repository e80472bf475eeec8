import Anvil

/// MobileNet v3 (Howard et al. 2019), large and small, as torchvision's `mobilenet_v3_large`
/// and `mobilenet_v3_small`.
///
/// A 3×3 stride-2 convolution with hard-swish, then inverted-residual blocks — a 1×1
/// expansion (skipped when it would not change the width), a depthwise convolution carrying
/// the stride, an optional squeeze-and-excitation gate, and a linear 1×1 projection, with a
/// residual addition when the block keeps its shape — then a 1×1 convolution to six times
/// the last block's channels with hard-swish, global average pooling, a hidden Dense layer
/// with hard-swish and the classifier: 5,483,032 parameters (large) and 2,542,856 (small) at
/// 1000 classes. Convolutions other than the gate's are bias-free and followed by batch
/// normalization with epsilon 0.001. The squeeze-and-excitation gate is global average
/// pooling, a 1×1 convolution to a quarter of the channels (rounded to a multiple of 8) with
/// ReLU, a 1×1 convolution back with hard-sigmoid (x / 6 + 0.5, clipped to 0...1), and an
/// ``Elementwise`` multiply of the `1 × 1 × C` gate with the feature map. Input: 224×224×3 RGB
/// normalised with ImageNet's mean and standard deviation.
///
/// Layer names are torchvision's module paths with `.` replaced by `_`: the stem
/// `features_0_0/1/2` (convolution, batch norm, hard-swish); in block N the units
/// `features_N_block_U_0/1/2` (expansion, depthwise, projection without activation), the
/// gate `features_N_block_U_avgpool`, `_fc1`, `_activation`, `_fc2`, `_scale_activation`
/// and `_mul`, and the residual `features_N_add`; then the last unit, `avgpool`,
/// `classifier_0`, `classifier_1` (hard-swish) and `classifier_3`. Weights converted from a
/// torchvision state_dict by `Scripts/convert_pytorch.py` load by name with layout `.pytorch`.
public enum MobileNetV3 {
    /// The two sizes of the paper.
    public enum Variant: String, Sendable, CaseIterable {
        /// MobileNet v3 large: 15 blocks, 1280 hidden features.
        case large
        /// MobileNet v3 small: 11 blocks, 1024 hidden features.
        case small

        /// torchvision's published parameter count at 1000 classes.
        public var publishedParameterCount: Int { self == .large ? 5_483_032 : 2_542_856 }

        /// The hidden Dense layer's features at width 1.
        var hiddenFeatures: Int { self == .large ? 1280 : 1024 }

        /// The blocks at width 1 (torchvision's `_mobilenet_v3_conf`).
        public var blocks: [Block] {
            switch self {
            case .large:
                return [
                    Block(16, 3, 16, 16, false, false, 1), Block(16, 3, 64, 24, false, false, 2),
                    Block(24, 3, 72, 24, false, false, 1), Block(24, 5, 72, 40, true, false, 2),
                    Block(40, 5, 120, 40, true, false, 1), Block(40, 5, 120, 40, true, false, 1),
                    Block(40, 3, 240, 80, false, true, 2), Block(80, 3, 200, 80, false, true, 1),
                    Block(80, 3, 184, 80, false, true, 1), Block(80, 3, 184, 80, false, true, 1),
                    Block(80, 3, 480, 112, true, true, 1), Block(112, 3, 672, 112, true, true, 1),
                    Block(112, 5, 672, 160, true, true, 2), Block(160, 5, 960, 160, true, true, 1),
                    Block(160, 5, 960, 160, true, true, 1),
                ]
            case .small:
                return [
                    Block(16, 3, 16, 16, true, false, 2), Block(16, 3, 72, 24, false, false, 2),
                    Block(24, 3, 88, 24, false, false, 1), Block(24, 5, 96, 40, true, true, 2),
                    Block(40, 5, 240, 40, true, true, 1), Block(40, 5, 240, 40, true, true, 1),
                    Block(40, 5, 120, 48, true, true, 1), Block(48, 5, 144, 48, true, true, 1),
                    Block(48, 5, 288, 96, true, true, 2), Block(96, 5, 576, 96, true, true, 1),
                    Block(96, 5, 576, 96, true, true, 1),
                ]
            }
        }
    }

    /// One inverted-residual block at width 1.
    public struct Block: Sendable {
        /// Input, expanded and output channels.
        public let input: Int, expanded: Int, output: Int
        /// The depthwise kernel size (3 or 5) and stride.
        public let kernel: Int, stride: Int
        /// Whether the block has a squeeze-and-excitation gate.
        public let squeezeExcitation: Bool
        /// Hard-swish (`true`) or ReLU activations.
        public let hardSwish: Bool

        init(_ input: Int, _ kernel: Int, _ expanded: Int, _ output: Int, _ squeezeExcitation: Bool, _ hardSwish: Bool,
             _ stride: Int) {
            (self.input, self.kernel, self.expanded, self.output) = (input, kernel, expanded, output)
            (self.squeezeExcitation, self.hardSwish, self.stride) = (squeezeExcitation, hardSwish, stride)
        }
    }

    /// Builds MobileNet v3.
    ///
    /// - Parameters:
    ///   - variant: Large or small.
    ///   - classes: Outputs of `classifier_3`.
    ///   - width: torchvision's `width_mult`: every block's channels and the hidden features
    ///     are `channels × width` rounded to a multiple of 8 (``MobileNetV2/divisible(_:by:)``).
    ///   - inputSize: Height and width of the input (the network ends with global pooling).
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(_ variant: Variant, classes: Int = 1000, width: Double = 1, inputSize: Int = 224,
                             includeSoftmax: Bool = true) throws -> Model {
        try ZooSupport.check("MobileNetV3", classes: classes, width: width, inputSize: inputSize, minimumInputSize: 1)
        let adjust = { (channels: Int) in MobileNetV2.divisible(Double(channels) * width) }
        let blocks = variant.blocks
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        var x = ZooSupport.convNormActivation(input, "features_0", adjust(blocks[0].input), kernel: 3, stride: 2, activation: .hardSwish)
        for (index, block) in blocks.enumerated() {
            x = invertedResidual(x, "features_\(index + 1)", block, adjust)
        }
        let last = 6 * adjust(blocks[blocks.count - 1].output)
        let logits = ZooSupport.convNormActivation(x, "features_\(blocks.count + 1)", last, kernel: 1, activation: .hardSwish)
            --> GlobalAveragePooling(name: "avgpool")
            --> Dense(neurons: adjust(variant.hiddenFeatures), name: "classifier_0")
            --> Activation(.hardSwish, name: "classifier_1")
            --> Dense(neurons: classes, name: "classifier_3")
        return try ZooSupport.model(input, logits, includeSoftmax: includeSoftmax)
    }

    /// torchvision's `SqueezeExcitation`: the map times a per-channel gate (ReLU and hard-sigmoid
    /// in MobileNet v3).
    static func squeezeExcitation(_ x: SymbolicTensor, _ name: String, channels: Int, squeezed: Int,
                                  activation: ActivationFunction = .relu,
                                  gate scale: ActivationFunction = .hardSigmoid(alpha: 1.0 / 6.0, beta: 0.5)) -> SymbolicTensor {
        let gate = x
            --> GlobalAveragePooling(name: "\(name)_avgpool")
            --> Convolution(kernel: (1, 1), channels: squeezed, padding: .valid, name: "\(name)_fc1")
            --> Activation(activation, name: "\(name)_activation")
            --> Convolution(kernel: (1, 1), channels: channels, padding: .valid, name: "\(name)_fc2")
            --> Activation(scale, name: "\(name)_scale_activation")
        return [gate, x] --> Elementwise(.multiply, name: "\(name)_mul")
    }

    /// torchvision's `InvertedResidual` (MobileNet v3's).
    static func invertedResidual(_ x: SymbolicTensor, _ name: String, _ block: Block,
                                 _ adjust: (Int) -> Int) -> SymbolicTensor {
        let input = adjust(block.input), expanded = adjust(block.expanded), output = adjust(block.output)
        let activation: ActivationFunction = block.hardSwish ? .hardSwish : .relu
        var y = x
        var unitIndex = 0
        if expanded != input {
            y = ZooSupport.convNormActivation(y, "\(name)_block_0", expanded, kernel: 1, activation: activation)
            unitIndex += 1
        }
        y = ZooSupport.convNormActivation(y, "\(name)_block_\(unitIndex)", expanded, kernel: block.kernel, stride: block.stride, depthwise: true,
                 activation: activation)
        unitIndex += 1
        if block.squeezeExcitation {
            y = squeezeExcitation(y, "\(name)_block_\(unitIndex)", channels: expanded,
                                  squeezed: MobileNetV2.divisible(Double(expanded / 4)))
            unitIndex += 1
        }
        y = ZooSupport.convNormActivation(y, "\(name)_block_\(unitIndex)", output, kernel: 1, activation: nil)
        guard block.stride == 1, input == output else { return y }
        return [y, x] --> Add(name: "\(name)_add")
    }
}
