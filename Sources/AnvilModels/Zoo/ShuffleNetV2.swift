import Anvil

/// ShuffleNet v2 (Ma et al. 2018) at width 1.0×, as torchvision's `shufflenet_v2_x1_0`.
///
/// A 3×3 stride-2 convolution (24 channels) and a 3×3 stride-2 max pool, then three stages of
/// 4, 8 and 4 blocks (116, 232 and 464 channels), a 1×1 convolution to 1024 channels, global
/// average pooling and the classifier: 2,278,604 parameters at 1000 classes. A stage's first
/// block halves the resolution with two branches on the whole input — (3×3 stride-2
/// depthwise, 1×1) and (1×1, 3×3 stride-2 depthwise, 1×1) — each giving half the channels;
/// the other blocks ``Slice`` the channels in halves, keep the first and send the second
/// through (1×1, 3×3 depthwise, 1×1). Every block ends by concatenating its two halves and a
/// ``ChannelShuffle`` with 2 groups. Convolutions are bias-free and followed by batch
/// normalization (epsilon 1e-5); the 1×1 convolutions are followed by ReLU, the depthwise
/// ones are linear. Input: 224×224×3 RGB normalised with ImageNet's mean and standard deviation.
///
/// Layer names are torchvision's module paths with `.` replaced by `_`: `conv1_0/1/2`,
/// `maxpool`; in block B of stage S (`stage2`...`stage4`) `stageS_B_branch1_0`...`_4` and
/// `stageS_B_branch2_0`...`_7` (convolution, batch norm and ReLU modules in order), the
/// halves `stageS_B_slice` and `stageS_B_slice_2`, the join `stageS_B_cat` and the shuffle
/// `stageS_B_shuffle`; then `conv5_0/1/2`, `mean` and `fc`. Weights converted from a
/// torchvision state_dict by `Scripts/convert_pytorch.py` load by name with layout `.pytorch`.
public enum ShuffleNetV2 {
    /// torchvision's published parameter count for `shufflenet_v2_x1_0`: 2,278,604.
    public static let publishedParameterCount = 2_278_604

    /// Blocks per stage.
    public static let stageRepeats = [4, 8, 4]
    /// Output channels of the stem, the three stages and the last convolution at width 1.
    public static let stageChannels = [24, 116, 232, 464, 1024]

    /// Builds ShuffleNet v2 1.0×.
    ///
    /// - Parameters:
    ///   - classes: Outputs of `fc`.
    ///   - width: Scales the stem and last convolution's channels (rounded down, at least 1)
    ///     and each stage's half-width (so stage channels stay even), for small variants in
    ///     tests; 1 is ShuffleNet v2 1.0×.
    ///   - inputSize: Height and width of the input (the network ends with global pooling).
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(classes: Int = 1000, width: Double = 1, inputSize: Int = 224,
                             includeSoftmax: Bool = true) throws -> Model {
        try ZooSupport.check("ShuffleNetV2", classes: classes, width: width, inputSize: inputSize, minimumInputSize: 1)
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        var channels = ZooSupport.scaled(stageChannels[0], width)
        var x = input
            --> Convolution(kernel: (3, 3), channels: channels, stride: (2, 2), padding: .explicit(1), useBias: false,
                            name: "conv1_0")
            --> BatchNormalization(epsilon: 1e-5, name: "conv1_1")
            --> Activation(.relu, name: "conv1_2")
            --> MaxPooling(kernel: (3, 3), stride: (2, 2), padding: .explicit(1), name: "maxpool")
        for (stage, repeats) in stageRepeats.enumerated() {
            let output = 2 * ZooSupport.scaled(stageChannels[stage + 1] / 2, width)
            for block in 0 ..< repeats {
                x = invertedResidual(x, "stage\(stage + 2)_\(block)", input: channels, output: output,
                                     stride: block == 0 ? 2 : 1)
                channels = output
            }
        }
        let logits = x
            --> Convolution(kernel: (1, 1), channels: ZooSupport.scaled(stageChannels[4], width), padding: .valid,
                            useBias: false, name: "conv5_0")
            --> BatchNormalization(epsilon: 1e-5, name: "conv5_1")
            --> Activation(.relu, name: "conv5_2")
            --> GlobalAveragePooling(name: "mean")
            --> Dense(neurons: classes, name: "fc")
        return try ZooSupport.model(input, logits, includeSoftmax: includeSoftmax)
    }

    /// A bias-free 1×1 convolution `<name>_<index>` with batch norm and ReLU after it.
    static func pointwise(_ x: SymbolicTensor, _ name: String, _ index: Int, _ channels: Int) -> SymbolicTensor {
        x
            --> Convolution(kernel: (1, 1), channels: channels, padding: .valid, useBias: false, name: "\(name)_\(index)")
            --> BatchNormalization(epsilon: 1e-5, name: "\(name)_\(index + 1)")
            --> Activation(.relu, name: "\(name)_\(index + 2)")
    }

    /// A bias-free 3×3 depthwise convolution `<name>_<index>` with batch norm after it.
    static func depthwise(_ x: SymbolicTensor, _ name: String, _ index: Int, stride: Int) -> SymbolicTensor {
        x
            --> DepthwiseConvolution(kernel: (3, 3), stride: (stride, stride), padding: .explicit(1), useBias: false,
                                     name: "\(name)_\(index)")
            --> BatchNormalization(epsilon: 1e-5, name: "\(name)_\(index + 1)")
    }

    /// torchvision's `InvertedResidual` (ShuffleNet v2's), ending with the channel shuffle.
    static func invertedResidual(_ x: SymbolicTensor, _ name: String, input: Int, output: Int,
                                 stride: Int) -> SymbolicTensor {
        let half = output / 2
        let kept: SymbolicTensor, processed: SymbolicTensor
        if stride > 1 {
            kept = pointwise(depthwise(x, "\(name)_branch1", 0, stride: stride), "\(name)_branch1", 2, half)
            processed = x
        } else {
            kept = x --> Slice(axis: -1, start: 0, end: input / 2, name: "\(name)_slice")
            processed = x --> Slice(axis: -1, start: input / 2, end: input, name: "\(name)_slice_2")
        }
        let branch2 = pointwise(depthwise(pointwise(processed, "\(name)_branch2", 0, half), "\(name)_branch2", 3,
                                          stride: stride), "\(name)_branch2", 5, half)
        return [kept, branch2]
            --> Concatenate(name: "\(name)_cat")
            --> ChannelShuffle(groups: 2, name: "\(name)_shuffle")
    }
}
