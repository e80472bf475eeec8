import Anvil

/// ResNet-50 (He et al. 2015), as torchvision's `resnet50` (v1.5: the stride on the 3×3
/// convolution): bottleneck blocks `[3, 4, 6, 3]`, 25,557,032 parameters at 1000 classes.
/// Layer names and input: see ``ResNet``.
public enum ResNet50 {
    /// torchvision's published parameter count for `resnet50`: 25,557,032.
    public static let publishedParameterCount = 25_557_032

    /// Builds ResNet-50.
    ///
    /// - Parameters:
    ///   - classes: Outputs of `fc`.
    ///   - width: Scales the stem and every stage's planes (rounded down, at least 1), for
    ///     small variants in tests; 1 is ResNet-50.
    ///   - inputSize: Height and width of the input (the network ends with global pooling).
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(classes: Int = 1000, width: Double = 1, inputSize: Int = 224,
                             includeSoftmax: Bool = true) throws -> Model {
        try ResNet.model(block: .bottleneck, stages: [3, 4, 6, 3], classes: classes, width: width, inputSize: inputSize,
                         includeSoftmax: includeSoftmax)
    }
}
