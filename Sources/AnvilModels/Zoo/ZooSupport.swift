import Anvil

/// What the zoo definitions share: channel scaling, option checks and the classifier's end.
enum ZooSupport {
    /// `channels × width` rounded down, at least 1: the rule `Scripts/anvil_convert/torch_zoo.py`
    /// uses for its reduced PyTorch definitions, so both build the same shapes.
    static func scaled(_ channels: Int, _ width: Double) -> Int {
        max(1, Int(Double(channels) * width))
    }

    /// Throws ``AnvilError`` (`invalidOption`) naming the network when an option is out of range.
    static func check(_ network: String, classes: Int, width: Double, inputSize: Int, minimumInputSize: Int) throws {
        guard classes > 0 else { throw AnvilError(.invalidOption, "\(network): classes must be positive, got \(classes)") }
        guard width > 0, width.isFinite else {
            throw AnvilError(.invalidOption, "\(network): width must be positive and finite, got \(width)")
        }
        guard inputSize >= minimumInputSize else {
            throw AnvilError(.invalidOption, "\(network): input size must be at least \(minimumInputSize), got \(inputSize)")
        }
    }

    /// The model from `input` to `logits`, with a `softmax` layer at the end when asked.
    static func model(_ input: Input, _ logits: SymbolicTensor, includeSoftmax: Bool) throws -> Model {
        try Model(input: input, output: includeSoftmax ? logits --> Softmax(name: "softmax") : logits)
    }

    /// torchvision's `Conv2dNormActivation`: `<name>_0` (bias-free convolution, depthwise when
    /// `depthwise`), `<name>_1` (batch norm, ε `epsilon`) and `<name>_2` (the activation, if any).
    static func convNormActivation(_ x: SymbolicTensor, _ name: String, _ channels: Int, kernel: Int, stride: Int = 1,
                                   depthwise: Bool = false, epsilon: Float = 0.001,
                                   activation: ActivationFunction?) -> SymbolicTensor {
        let pad = (kernel - 1) / 2
        let convolution: SymbolicTensor = depthwise
            ? x --> DepthwiseConvolution(kernel: (kernel, kernel), stride: (stride, stride), padding: .explicit(pad),
                                         useBias: false, name: "\(name)_0")
            : x --> Convolution(kernel: (kernel, kernel), channels: channels, stride: (stride, stride),
                                padding: .explicit(pad), useBias: false, name: "\(name)_0")
        let normalized = convolution --> BatchNormalization(epsilon: epsilon, name: "\(name)_1")
        guard let activation else { return normalized }
        return normalized --> Activation(activation, name: "\(name)_2")
    }
}
