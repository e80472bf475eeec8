import Anvil

/// DenseNet-121 (Huang et al. 2016), as torchvision's `densenet121`.
///
/// A 7×7 stride-2 convolution and a 3×3 stride-2 max pool, then four dense blocks of 6, 12,
/// 24 and 16 layers with a transition between blocks, a final batch norm and ReLU, global
/// average pooling and the classifier: 7,978,856 parameters at 1000 classes. Each dense
/// layer reads the ``Concatenate`` of the block's input and every earlier layer's output,
/// and adds `growth rate` (32) channels: batch norm, ReLU, a 1×1 convolution to 4 × growth
/// channels, batch norm, ReLU, a 3×3 convolution to `growth` channels. A transition halves
/// the channels (rounding down) with batch norm, ReLU, a 1×1 convolution and a 2×2 stride-2
/// average pool. Convolutions have no bias; batch normalization uses epsilon 1e-5. Input:
/// 224×224×3 RGB normalised with ImageNet's mean and standard deviation.
///
/// Layer names are torchvision's module paths with `.` replaced by `_`: `features_conv0`,
/// `features_norm0`, `features_relu0`, `features_pool0`; in dense layer L of block B
/// `features_denseblockB_denselayerL_norm1`, `_relu1`, `_conv1`, `_norm2`, `_relu2`,
/// `_conv2`, reading `features_denseblockB_denselayerL_cat` (from the second layer on) —
/// the block's output is `features_denseblockB_cat`; transitions `features_transitionB_norm`,
/// `_relu`, `_conv`, `_pool`; then `features_norm5`, `relu`, `avgpool` and `classifier`.
/// Weights converted from a torchvision state_dict by `Scripts/convert_pytorch.py` load by
/// name with layout `.pytorch`.
public enum DenseNet121 {
    /// torchvision's published parameter count for `densenet121`: 7,978,856.
    public static let publishedParameterCount = 7_978_856

    /// Dense layers in each of the four blocks.
    public static let blockLayers = [6, 12, 24, 16]

    /// Builds DenseNet-121.
    ///
    /// - Parameters:
    ///   - classes: Outputs of `classifier`.
    ///   - width: Scales the growth rate (32) and the stem's 64 channels (rounded down, at
    ///     least 1) — torchvision's `growth_rate` and `num_init_features` — for small variants
    ///     in tests; 1 is DenseNet-121.
    ///   - inputSize: Height and width of the input, at least 32 (the network ends with global pooling).
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(classes: Int = 1000, width: Double = 1, inputSize: Int = 224,
                             includeSoftmax: Bool = true) throws -> Model {
        try ZooSupport.check("DenseNet121", classes: classes, width: width, inputSize: inputSize, minimumInputSize: 32)
        let growth = ZooSupport.scaled(32, width)
        var channels = ZooSupport.scaled(64, width)
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        var x = input
            --> Convolution(kernel: (7, 7), channels: channels, stride: (2, 2), padding: .explicit(3), useBias: false,
                            name: "features_conv0")
            --> BatchNormalization(epsilon: 1e-5, name: "features_norm0")
            --> Activation(.relu, name: "features_relu0")
            --> MaxPooling(kernel: (3, 3), stride: (2, 2), padding: .explicit(1), name: "features_pool0")
        for (index, layers) in blockLayers.enumerated() {
            let block = "features_denseblock\(index + 1)"
            var features = [x]
            for layer in 1 ... layers {
                let name = "\(block)_denselayer\(layer)"
                let joined = features.count == 1 ? x : (features --> Concatenate(name: "\(name)_cat"))
                features.append(denseLayer(joined, name, growth: growth))
            }
            x = features --> Concatenate(name: "\(block)_cat")
            channels += layers * growth
            if index < blockLayers.count - 1 {
                channels /= 2
                let transition = "features_transition\(index + 1)"
                x = x
                    --> BatchNormalization(epsilon: 1e-5, name: "\(transition)_norm")
                    --> Activation(.relu, name: "\(transition)_relu")
                    --> Convolution(kernel: (1, 1), channels: channels, padding: .valid, useBias: false,
                                    name: "\(transition)_conv")
                    --> AveragePooling(kernel: (2, 2), stride: (2, 2), name: "\(transition)_pool")
            }
        }
        let logits = x
            --> BatchNormalization(epsilon: 1e-5, name: "features_norm5")
            --> Activation(.relu, name: "relu")
            --> GlobalAveragePooling(name: "avgpool")
            --> Dense(neurons: classes, name: "classifier")
        return try ZooSupport.model(input, logits, includeSoftmax: includeSoftmax)
    }

    /// torchvision's `_DenseLayer` (bottleneck width 4 × growth) on the joined features.
    static func denseLayer(_ x: SymbolicTensor, _ name: String, growth: Int) -> SymbolicTensor {
        x
            --> BatchNormalization(epsilon: 1e-5, name: "\(name)_norm1")
            --> Activation(.relu, name: "\(name)_relu1")
            --> Convolution(kernel: (1, 1), channels: 4 * growth, padding: .valid, useBias: false, name: "\(name)_conv1")
            --> BatchNormalization(epsilon: 1e-5, name: "\(name)_norm2")
            --> Activation(.relu, name: "\(name)_relu2")
            --> Convolution(kernel: (3, 3), channels: growth, padding: .explicit(1), useBias: false, name: "\(name)_conv2")
    }
}
