import Anvil

/// MobileNet v1 (Howard et al. 2017), as Keras builds it (`keras.applications.MobileNet`).
///
/// A 3×3 stride-2 convolution, then 13 depthwise-separable blocks — a 3×3 depthwise and a
/// 1×1 pointwise convolution, each without bias and followed by batch normalization
/// (epsilon 0.001, Keras's) and ReLU6 — then global average pooling and a 1×1 convolution
/// to the classes. 4,231,976 parameters at α = 1, 224×224, 1000 classes (Keras's trainable
/// count; the batch-norm moving statistics add 21,888). Padding is TensorFlow's SAME, as in
/// Keras: stride-2 layers pad one row and column at the bottom and right. Input: RGB
/// scaled to -1...1 for Keras's weights.
///
/// torchvision has no MobileNet v1, so the layer names are Keras's: `conv1`, `conv1_bn`,
/// `conv1_relu`; for block N = 1...13 `conv_dw_N`, `conv_dw_N_bn`, `conv_dw_N_relu`,
/// `conv_pw_N`, `conv_pw_N_bn`, `conv_pw_N_relu`; then `global_pool`, `conv_preds` (and
/// `softmax`). `Scripts/anvil_convert/torch_zoo.py` defines the same network in PyTorch with these
/// module names (`Scripts/convert_pytorch.py --torchvision mobilenet_v1`), and Keras weights map one-to-one by layer
/// name (layout `.tensorflow`).
public enum MobileNetV1 {
    /// Keras's published parameter count at α = 1, 224×224, 1000 classes: 4,231,976
    /// (trainable; 4,253,864 with the batch-norm moving statistics).
    public static let publishedParameterCount = 4_231_976

    /// Output channels and stride of the 13 depthwise-separable blocks at α = 1.
    public static let blocks: [(channels: Int, stride: Int)] = [
        (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
        (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1),
    ]

    /// Builds MobileNet v1.
    ///
    /// - Parameters:
    ///   - alpha: The width multiplier α: every layer has `channels × α` channels (rounded
    ///     down, at least 1). The paper's values are 1, 0.75, 0.5 and 0.25.
    ///   - depthMultiplier: Output channels per input channel of the depthwise convolutions
    ///     (Keras's `depth_multiplier`).
    ///   - inputSize: Height and width of the input: the resolution multiplier ρ
    ///     (224, 192, 160 and 128 in the paper).
    ///   - classes: Outputs of `conv_preds`.
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(alpha: Double = 1, depthMultiplier: Int = 1, inputSize: Int = 224, classes: Int = 1000,
                             includeSoftmax: Bool = true) throws -> Model {
        try ZooSupport.check("MobileNetV1", classes: classes, width: alpha, inputSize: inputSize, minimumInputSize: 32)
        guard depthMultiplier > 0 else {
            throw AnvilError(.invalidOption, "MobileNetV1: depth multiplier must be positive, got \(depthMultiplier)")
        }
        let c = { (channels: Int) in ZooSupport.scaled(channels, alpha) }
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        var x = input
            --> Convolution(kernel: (3, 3), channels: c(32), stride: (2, 2), padding: .same, useBias: false, name: "conv1")
            --> BatchNormalization(epsilon: 0.001, name: "conv1_bn")
            --> Activation(.relu6, name: "conv1_relu")
        for (index, block) in blocks.enumerated() {
            let n = index + 1
            let padding: Padding = block.stride == 1 ? .same : .explicit(top: 0, left: 0, bottom: 1, right: 1)
            x = x
                --> DepthwiseConvolution(kernel: (3, 3), multiplier: depthMultiplier, stride: (block.stride, block.stride),
                                         padding: padding, useBias: false, name: "conv_dw_\(n)")
                --> BatchNormalization(epsilon: 0.001, name: "conv_dw_\(n)_bn")
                --> Activation(.relu6, name: "conv_dw_\(n)_relu")
                --> PointwiseConvolution(channels: c(block.channels), useBias: false, name: "conv_pw_\(n)")
                --> BatchNormalization(epsilon: 0.001, name: "conv_pw_\(n)_bn")
                --> Activation(.relu6, name: "conv_pw_\(n)_relu")
        }
        let logits = x
            --> GlobalAveragePooling(name: "global_pool")
            --> PointwiseConvolution(channels: classes, name: "conv_preds")
        return try ZooSupport.model(input, logits, includeSoftmax: includeSoftmax)
    }
}
