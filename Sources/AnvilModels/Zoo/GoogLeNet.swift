import Anvil

/// GoogLeNet (Inception v1, Szegedy et al. 2014), as torchvision's
/// `googlenet(aux_logits: false, transform_input: false)`.
///
/// A stem of three convolutions and two max pools, then nine inception blocks (`3a`, `3b`,
/// a max pool, `4a`...`4e`, a max pool, `5a`, `5b`) whose four branches — 1×1 | 1×1 → 3×3 |
/// 1×1 → 3×3 | 3×3 max pool → 1×1 — are joined with ``Concatenate``, then global average
/// pooling and the classifier: 6,624,904 parameters at 1000 classes (torchvision's
/// published count, without the training-only auxiliary classifiers). As in torchvision,
/// the third branch uses a 3×3 convolution where the paper has 5×5, and every max pool
/// rounds its output size up (PyTorch's `ceil_mode=True`). Input: 224×224×3 RGB normalised
/// with ImageNet's mean and standard deviation.
///
/// Every convolution is torchvision's `BasicConv2d` unit: convolution without bias, batch
/// normalization with epsilon 0.001, ReLU. Layer names are torchvision's module paths with
/// `.` replaced by `_`: the stem units `conv1`...`conv3` (`conv1_conv`, `conv1_bn`,
/// `conv1_relu`), the pools `maxpool1`...`maxpool4`; in block `inception3a` the units
/// `inception3a_branch1`, `inception3a_branch2_0`, `inception3a_branch2_1`, ...,
/// the branch pool `inception3a_branch4_0` and the join `inception3a_cat`; then `avgpool`
/// and `fc`. Weights converted from a torchvision state_dict by `Scripts/convert_pytorch.py`
/// load by name with layout `.pytorch`.
///
/// torchvision's pretrained weights were made for `transform_input: true`, which maps
/// ImageNet-normalised input to `(x − 0.5) / 0.5` per channel: feed this model RGB scaled
/// to 0...1, minus 0.5, divided by 0.5.
public enum GoogLeNet {
    /// torchvision's published parameter count for `googlenet`: 6,624,904.
    public static let publishedParameterCount = 6_624_904

    /// The nine inception blocks at width 1: name and the channels of the 1×1 branch, the
    /// 3×3 branch's reduction and output, the second 3×3 branch's reduction and output, and
    /// the pool projection; `nil` marks a 3×3/2 max pool (`maxpool3`, then a 2×2/2 `maxpool4`).
    public static let blocks: [(name: String, channels: [Int])?] = [
        ("inception3a", [64, 96, 128, 16, 32, 32]), ("inception3b", [128, 128, 192, 32, 96, 64]), nil,
        ("inception4a", [192, 96, 208, 16, 48, 64]), ("inception4b", [160, 112, 224, 24, 64, 64]),
        ("inception4c", [128, 128, 256, 24, 64, 64]), ("inception4d", [112, 144, 288, 32, 64, 64]),
        ("inception4e", [256, 160, 320, 32, 128, 128]), nil,
        ("inception5a", [256, 160, 320, 32, 128, 128]), ("inception5b", [384, 192, 384, 48, 128, 128]),
    ]

    /// Builds GoogLeNet.
    ///
    /// - Parameters:
    ///   - classes: Outputs of `fc`.
    ///   - width: Scales every convolution's channels (rounded down, at least 1), for small
    ///     variants in tests; 1 is GoogLeNet.
    ///   - inputSize: Height and width of the input, at least 32 (the network ends with global pooling).
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(classes: Int = 1000, width: Double = 1, inputSize: Int = 224,
                             includeSoftmax: Bool = true) throws -> Model {
        try ZooSupport.check("GoogLeNet", classes: classes, width: width, inputSize: inputSize, minimumInputSize: 32)
        let c = { (channels: Int) in ZooSupport.scaled(channels, width) }
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        var x = unit(input, "conv1", c(64), kernel: 7, stride: 2, padding: 3)
        x = x --> MaxPooling(kernel: (3, 3), stride: (2, 2), ceilMode: true, name: "maxpool1")
        x = unit(x, "conv2", c(64), kernel: 1)
        x = unit(x, "conv3", c(192), kernel: 3, padding: 1)
        x = x --> MaxPooling(kernel: (3, 3), stride: (2, 2), ceilMode: true, name: "maxpool2")
        var pools = 2
        for block in blocks {
            guard let block else {
                pools += 1
                let size = pools == 3 ? 3 : 2
                x = x --> MaxPooling(kernel: (size, size), stride: (2, 2), ceilMode: true, name: "maxpool\(pools)")
                continue
            }
            x = inception(x, block.name, block.channels.map(c))
        }
        let logits = x
            --> GlobalAveragePooling(name: "avgpool")
            --> Dense(neurons: classes, name: "fc")
        return try ZooSupport.model(input, logits, includeSoftmax: includeSoftmax)
    }

    /// torchvision's `BasicConv2d`: `<name>_conv` (no bias), `<name>_bn` (ε 0.001), `<name>_relu`.
    static func unit(_ x: SymbolicTensor, _ name: String, _ channels: Int, kernel: Int, stride: Int = 1,
                     padding: Int = 0) -> SymbolicTensor {
        x
            --> Convolution(kernel: (kernel, kernel), channels: channels, stride: (stride, stride),
                            padding: .explicit(padding), useBias: false, name: "\(name)_conv")
            --> BatchNormalization(epsilon: 0.001, name: "\(name)_bn")
            --> Activation(.relu, name: "\(name)_relu")
    }

    /// torchvision's `Inception` block with (scaled) channels
    /// `[1×1, 3×3 reduction, 3×3, second 3×3 reduction, second 3×3, pool projection]`.
    static func inception(_ x: SymbolicTensor, _ name: String, _ channels: [Int]) -> SymbolicTensor {
        let branch1 = unit(x, "\(name)_branch1", channels[0], kernel: 1)
        let branch2 = unit(unit(x, "\(name)_branch2_0", channels[1], kernel: 1), "\(name)_branch2_1", channels[2],
                           kernel: 3, padding: 1)
        let branch3 = unit(unit(x, "\(name)_branch3_0", channels[3], kernel: 1), "\(name)_branch3_1", channels[4],
                           kernel: 3, padding: 1)
        let pooled = x --> MaxPooling(kernel: (3, 3), stride: (1, 1), padding: .explicit(1), ceilMode: true,
                                      name: "\(name)_branch4_0")
        let branch4 = unit(pooled, "\(name)_branch4_1", channels[5], kernel: 1)
        return [branch1, branch2, branch3, branch4] --> Concatenate(name: "\(name)_cat")
    }
}
