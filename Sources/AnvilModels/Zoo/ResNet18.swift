import Anvil

/// ResNet-18 (He et al. 2015), as torchvision's `resnet18`: basic blocks `[2, 2, 2, 2]`,
/// 11,689,512 parameters at 1000 classes. Layer names and input: see ``ResNet``.
public enum ResNet18 {
    /// torchvision's published parameter count for `resnet18`: 11,689,512.
    public static let publishedParameterCount = 11_689_512

    /// Builds ResNet-18.
    ///
    /// - Parameters:
    ///   - classes: Outputs of `fc`.
    ///   - width: Scales the stem and every stage's channels (rounded down, at least 1), for
    ///     small variants in tests; 1 is ResNet-18.
    ///   - inputSize: Height and width of the input (the network ends with global pooling).
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(classes: Int = 1000, width: Double = 1, inputSize: Int = 224,
                             includeSoftmax: Bool = true) throws -> Model {
        try ResNet.model(block: .basic, stages: [2, 2, 2, 2], classes: classes, width: width, inputSize: inputSize,
                         includeSoftmax: includeSoftmax)
    }
}
