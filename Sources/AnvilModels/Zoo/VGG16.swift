import Anvil

/// VGG16: configuration D of Simonyan & Zisserman (2014), as torchvision's `vgg16`.
///
/// Thirteen 3×3 convolutions with ReLU in five blocks, each closed by 2×2 max pooling, then
/// two 4096-wide fully connected layers with ReLU and the classifier: 138,357,544
/// parameters at 1000 classes. Input: 224×224×3 RGB scaled to 0...1 and normalised with
/// ImageNet's mean (0.485, 0.456, 0.406) and standard deviation (0.229, 0.224, 0.225).
///
/// Layer names are torchvision's module paths with `.` replaced by `_` — convolutions
/// `features_0` ... `features_28`, pools `features_4` ... `features_30`, then
/// `classifier_0`, `classifier_3`, `classifier_6` — so weights converted from a torchvision
/// state_dict by `Scripts/convert_pytorch.py` load by name, compiled with layout `.pytorch`
/// (which also reorders `classifier_0` for PyTorch's C,H,W flattening). torchvision's ReLU
/// modules are the convolutions' activations; its dropout is the identity at inference;
/// its adaptive 7×7 average pooling is the identity at 224×224 (`avgpool` otherwise).
public enum VGG16 {
    /// torchvision's published parameter count for `vgg16`: 138,357,544.
    public static let publishedParameterCount = 138_357_544

    /// Builds VGG16.
    ///
    /// - Parameters:
    ///   - classes: Outputs of the last layer, `classifier_6`.
    ///   - width: Scales every convolution's channels and the two hidden layers' 4096
    ///     (rounded down, at least 1), for small variants in tests; 1 is VGG16.
    ///   - inputSize: Height and width of the input. The last feature map, `inputSize / 32`,
    ///     must be 7 or a multiple of 7: torchvision's adaptive average pooling to 7×7 is
    ///     then the identity or an `avgpool` AveragePooling layer.
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(classes: Int = 1000, width: Double = 1, inputSize: Int = 224,
                             includeSoftmax: Bool = true) throws -> Model {
        try ZooSupport.check("VGG16", classes: classes, width: width, inputSize: inputSize, minimumInputSize: 32)
        let features = inputSize / 32
        guard features % 7 == 0 else {
            throw AnvilError(.invalidOption, "VGG16: input size \(inputSize) leaves a \(features)×\(features) feature map; "
                             + "torchvision pools it to 7×7, which Anvil does for multiples of 7 (input 224, 448, ...)")
        }
        let c = { (channels: Int) in ZooSupport.scaled(channels, width) }
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        let block1 = input
            --> Convolution(kernel: (3, 3), channels: c(64), padding: .explicit(1), activation: .relu, name: "features_0")
            --> Convolution(kernel: (3, 3), channels: c(64), padding: .explicit(1), activation: .relu, name: "features_2")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "features_4")
        let block2 = block1
            --> Convolution(kernel: (3, 3), channels: c(128), padding: .explicit(1), activation: .relu, name: "features_5")
            --> Convolution(kernel: (3, 3), channels: c(128), padding: .explicit(1), activation: .relu, name: "features_7")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "features_9")
        let block3 = block2
            --> Convolution(kernel: (3, 3), channels: c(256), padding: .explicit(1), activation: .relu, name: "features_10")
            --> Convolution(kernel: (3, 3), channels: c(256), padding: .explicit(1), activation: .relu, name: "features_12")
            --> Convolution(kernel: (3, 3), channels: c(256), padding: .explicit(1), activation: .relu, name: "features_14")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "features_16")
        let block4 = block3
            --> Convolution(kernel: (3, 3), channels: c(512), padding: .explicit(1), activation: .relu, name: "features_17")
            --> Convolution(kernel: (3, 3), channels: c(512), padding: .explicit(1), activation: .relu, name: "features_19")
            --> Convolution(kernel: (3, 3), channels: c(512), padding: .explicit(1), activation: .relu, name: "features_21")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "features_23")
        let block5 = block4
            --> Convolution(kernel: (3, 3), channels: c(512), padding: .explicit(1), activation: .relu, name: "features_24")
            --> Convolution(kernel: (3, 3), channels: c(512), padding: .explicit(1), activation: .relu, name: "features_26")
            --> Convolution(kernel: (3, 3), channels: c(512), padding: .explicit(1), activation: .relu, name: "features_28")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "features_30")
        let pooled = features == 7 ? block5
            : block5 --> AveragePooling(kernel: (features / 7, features / 7), name: "avgpool")
        let logits = pooled
            --> Dense(neurons: c(4096), activation: .relu, name: "classifier_0")
            --> Dense(neurons: c(4096), activation: .relu, name: "classifier_3")
            --> Dense(neurons: classes, name: "classifier_6")
        return try ZooSupport.model(input, logits, includeSoftmax: includeSoftmax)
    }
}
