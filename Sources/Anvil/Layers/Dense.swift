/// A fully connected layer. A spatial input is flattened in `H, W, C` order (Forge's);
/// declare `.pytorch` at compile time for weights trained on `C, H, W`-flattened inputs.
///
/// The output is `1 × 1 × neurons`.
public final class Dense: Layer, FusableLayer {
    /// Output features.
    public let neurons: Int
    /// Whether the layer adds a bias per output.
    public let useBias: Bool
    /// The activation applied to the output.
    public let activation: ActivationFunction
    /// The user's name for the layer.
    public let name: String?

    /// Creates a dense layer.
    public init(neurons: Int, useBias: Bool = true, activation: ActivationFunction = .none, name: String? = nil) {
        self.neurons = neurons
        self.useBias = useBias
        self.activation = activation
        self.name = name
    }

    /// A BatchNormalization and an activation; a residual `Add` stays a step of its own.
    var absorbs: FusionCapabilities { [.batchNormalization, .activation] }

    /// `dense`.
    public var namePrefix: String { "dense" }

    /// `1 × 1 × neurons`.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        guard neurons > 0 else { throw AnvilError(.invalidOption, "neurons must be positive, got \(neurons)") }
        _ = try checkedProduct([neurons, inputs[0].count], what: "weight tensor")
        return .vector(neurons)
    }

    /// Weights `neurons × inputs` and (if `useBias`) biases.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        let weights = ParameterSpec(.weights, count: neurons * inputs[0].count)
        return useBias ? [weights, ParameterSpec(.biases, count: neurons)] : [weights]
    }

    /// Inputs × outputs.
    public func macs(for inputs: [Shape], output: Shape) -> Int { saturatingProduct(inputs[0].count, neurons) }

    /// `sgemv` / `sgemm`.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        let raw = try context.parameter(.weights)
        // PyTorch's C,H,W-ordered weights over a spatial input stay as they are; the kernel
        // reorders the (much smaller) input instead.
        let channelsFirst = context.layout == .pytorch && (input.height > 1 || input.width > 1)
        let reordered = channelsFirst ? nil
            : WeightReorder.dense(raw.buffer, layout: context.layout, outputs: neurons, inputShape: input)
        let weights = KernelWeights(source: raw, reordered: reordered, bias: useBias ? try context.parameter(.biases) : nil,
                                    outputs: neurons, weightsPerOutput: input.count, affine: context.foldedAffine)
        return DenseKernel(inputs: input.count, outputs: neurons, weights: weights,
                           activation: context.fusedActivation ?? activation, channelsFirstInput: channelsFirst ? input : nil)
    }
}

extension Dense: ModelFileCodable {
    /// `Dense`.
    static var fileTypeName: String { "Dense" }

    /// Reads `neurons` (required), `bias` and `activation`.
    convenience init(fields: JSONFields, name: String) throws {
        self.init(neurons: try fields.int("neurons"), useBias: try fields.bool("bias", default: true),
                  activation: try fields.activation("activation", default: .none), name: name)
    }

    /// Every option, defaults included.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("neurons", .int(neurons)), ("bias", .bool(useBias)), ("activation", .activation(activation))]
    }
}
