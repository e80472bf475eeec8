import Anvil

/// SqueezeNet 1.1 (Iandola et al. 2016; the 1.1 revision), as torchvision's `squeezenet1_1`.
///
/// A 3×3 stride-2 convolution, then eight fire modules — a 1×1 "squeeze" convolution feeding
/// a 1×1 and a 3×3 "expand" convolution whose outputs are concatenated — between ceil-mode
/// 3×3 max pools, then a 1×1 convolution to the classes with ReLU and global average
/// pooling: 1,235,496 parameters at 1000 classes. Input: 224×224×3 RGB normalised with
/// ImageNet's mean and standard deviation.
///
/// Layer names are torchvision's module paths with `.` replaced by `_`: `features_0`
/// (stem), pools `features_2`, `features_5`, `features_8`, fire N (3, 4, 6, 7, 9...12)
/// `features_N_squeeze`, `features_N_expand1x1`, `features_N_expand3x3` and its
/// concatenation `features_N_cat`, then `classifier_1` (convolution) and `classifier_3`
/// (pooling). Weights converted from torchvision by `Scripts/convert_pytorch.py` load by
/// name with layout `.pytorch`.
public enum SqueezeNet11 {
    /// torchvision's published parameter count for `squeezenet1_1`: 1,235,496.
    public static let publishedParameterCount = 1_235_496

    /// Builds SqueezeNet 1.1.
    ///
    /// - Parameters:
    ///   - classes: Outputs of `classifier_1`.
    ///   - width: Scales every convolution's channels but the last (rounded down, at least 1),
    ///     for small variants in tests; 1 is SqueezeNet 1.1.
    ///   - inputSize: Height and width of the input (the network ends with global pooling).
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(classes: Int = 1000, width: Double = 1, inputSize: Int = 224,
                             includeSoftmax: Bool = true) throws -> Model {
        try ZooSupport.check("SqueezeNet11", classes: classes, width: width, inputSize: inputSize, minimumInputSize: 25)
        let c = { (channels: Int) in ZooSupport.scaled(channels, width) }
        func fire(_ x: SymbolicTensor, _ index: Int, squeeze: Int, expand: Int) -> SymbolicTensor {
            let name = "features_\(index)"
            let squeezed = x --> Convolution(kernel: (1, 1), channels: c(squeeze), activation: .relu, name: "\(name)_squeeze")
            let expand1x1 = squeezed
                --> Convolution(kernel: (1, 1), channels: c(expand), activation: .relu, name: "\(name)_expand1x1")
            let expand3x3 = squeezed
                --> Convolution(kernel: (3, 3), channels: c(expand), padding: .explicit(1), activation: .relu,
                                name: "\(name)_expand3x3")
            return [expand1x1, expand3x3] --> Concatenate(name: "\(name)_cat")
        }
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        var x = input
            --> Convolution(kernel: (3, 3), channels: c(64), stride: (2, 2), padding: .valid, activation: .relu, name: "features_0")
            --> MaxPooling(kernel: (3, 3), stride: (2, 2), ceilMode: true, name: "features_2")
        x = fire(x, 3, squeeze: 16, expand: 64)
        x = fire(x, 4, squeeze: 16, expand: 64)
        x = x --> MaxPooling(kernel: (3, 3), stride: (2, 2), ceilMode: true, name: "features_5")
        x = fire(x, 6, squeeze: 32, expand: 128)
        x = fire(x, 7, squeeze: 32, expand: 128)
        x = x --> MaxPooling(kernel: (3, 3), stride: (2, 2), ceilMode: true, name: "features_8")
        x = fire(x, 9, squeeze: 48, expand: 192)
        x = fire(x, 10, squeeze: 48, expand: 192)
        x = fire(x, 11, squeeze: 64, expand: 256)
        x = fire(x, 12, squeeze: 64, expand: 256)
        let logits = x
            --> Convolution(kernel: (1, 1), channels: classes, activation: .relu, name: "classifier_1")
            --> GlobalAveragePooling(name: "classifier_3")
        return try ZooSupport.model(input, logits, includeSoftmax: includeSoftmax)
    }
}
