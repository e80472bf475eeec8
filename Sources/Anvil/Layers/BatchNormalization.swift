/// Batch normalization at inference: `γ (x − mean) / √(variance + ε) + β` per channel.
///
/// After a convolution or dense layer without activation it is folded into that layer's
/// weights and bias at compile time, and costs nothing at run time. Elsewhere (after a
/// concatenation, as in DenseNet) it is one per-channel pass that also applies a following
/// Activation.
public final class BatchNormalization: Layer, FusableLayer {
    /// Added to the variance (Keras's default 0.001; PyTorch and ONNX use 1e-5).
    public let epsilon: Float
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(epsilon: Float = 0.001, name: String? = nil) {
        self.epsilon = epsilon
        self.name = name
    }

    /// `bn`.
    public var namePrefix: String { "bn" }

    /// It applies no activation of its own.
    var activation: ActivationFunction { .none }
    /// A following Activation, applied to each range of rows the kernel has just written.
    var absorbs: FusionCapabilities { .activation }

    /// The input shape.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        guard epsilon >= 0, epsilon.isFinite else { throw AnvilError(.invalidOption, "epsilon must be finite and non-negative, got \(epsilon)") }
        return inputs[0]
    }

    /// γ, β, mean and variance, one value per channel each.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        let c = inputs[0].channels
        return [ParameterSpec(.gamma, count: c), ParameterSpec(.beta, count: c),
                ParameterSpec(.mean, count: c), ParameterSpec(.variance, count: c)]
    }

    /// Output elements (one multiply-add each).
    public func macs(for inputs: [Shape], output: Shape) -> Int { output.count }

    /// The equivalent per-channel `scale · x + shift`.
    func affine(_ context: KernelContext) throws -> (scale: [Float], shift: [Float]) {
        let gamma = try context.parameter(.gamma).buffer, beta = try context.parameter(.beta).buffer
        let mean = try context.parameter(.mean).buffer, variance = try context.parameter(.variance).buffer
        var scale = [Float](repeating: 0, count: gamma.count), shift = scale
        for c in 0 ..< gamma.count {
            guard variance[c] + epsilon > 0 else {
                throw AnvilError(.invalidParameter, "layer '\(context.layerName)': variance \(variance[c]) + epsilon is not positive for channel \(c)")
            }
            scale[c] = gamma[c] / (variance[c] + epsilon).squareRoot()
            shift[c] = beta[c] - mean[c] * scale[c]
        }
        return (scale, shift)
    }

    /// A per-channel affine kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        let (scale, shift) = try affine(context)
        return ChannelAffineKernel(channels: input.channels, pixelsPerImage: input.height * input.width,
                                   scale: scale, shift: shift, prelu: false, activation: context.fusedActivation ?? .none)
    }
}

extension BatchNormalization: ModelFileCodable {
    /// `BatchNormalization`.
    static var fileTypeName: String { "BatchNormalization" }

    /// Reads `epsilon` (0.001).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(epsilon: try fields.float("epsilon", default: 0.001), name: name)
    }

    /// `epsilon`.
    func encodeFields() throws -> [(String, JSONValue)] { [("epsilon", .number(epsilon))] }
}
