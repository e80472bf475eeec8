/// A fully connected layer. An image (rank 4) is flattened in `H, W, C` order (Forge's);
/// declare `.pytorch` at compile time for weights trained on `C, H, W`-flattened inputs. A vector
/// gives a vector of `neurons`; a sequence `[N, L, C]` is transformed position by position on its
/// last axis (PyTorch's `Linear`, Keras' `Dense` on 3-D input), giving `[N, L, neurons]`.
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

    /// A vector of `neurons`, or `[N, L, neurons]` for a sequence.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        guard neurons > 0 else { throw AnvilError(.invalidOption, "neurons must be positive, got \(neurons)") }
        _ = try checkedProduct([neurons, features(inputs[0])], what: "weight tensor")
        return inputs[0].rank == 3 ? .sequence(length: inputs[0].width, channels: neurons) : .vector(neurons)
    }

    /// The input features each output reads: the channels of a sequence, everything otherwise.
    func features(_ input: Shape) -> Int { input.rank == 3 ? input.channels : input.count }

    /// Weights `neurons × inputs` and (if `useBias`) biases.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        let weights = ParameterSpec(.weights, count: neurons * features(inputs[0]))
        return useBias ? [weights, ParameterSpec(.biases, count: neurons)] : [weights]
    }

    /// Inputs × outputs.
    public func macs(for inputs: [Shape], output: Shape) -> Int { saturatingProduct(inputs[0].count, neurons) }

    /// `sgemv` / `sgemm`.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel { try makeFusedKernel(context).kernel }

    /// The kernel of ``makeKernel(_:)``, with a folded BatchNormalization in its weights.
    func makeFusedKernel(_ context: KernelContext) throws -> FusedKernel {
        let input = context.inputShapes[0]
        if input.rank == 3 {
            // Per position on the last axis: a 1×1 convolution over the 1 × L image, whose
            // weights `[out][in]` (Forge, PyTorch) or `[in][out]` (Keras) read the same.
            return try PointwiseConvolution(channels: neurons, useBias: useBias, activation: activation).makeFusedKernel(context)
        }
        let raw = try context.parameter(.weights)
        // PyTorch's C,H,W-ordered weights over a spatial input stay as they are; the kernel
        // reorders the (much smaller) input instead.
        let channelsFirst = context.layout == .pytorch && (input.height > 1 || input.width > 1)
        var reordered = channelsFirst ? nil
            : WeightReorder.dense(raw.buffer, layout: context.layout, outputs: neurons, inputShape: input)
        if let order = context.inputOrder, !channelsFirst {
            // A folded Transpose → Flatten: input value i sits at order[i]; move the weights instead.
            let rows = reordered ?? raw.values
            var moved = [Float](repeating: 0, count: rows.count)
            let count = input.count
            for o in 0 ..< neurons { for i in 0 ..< count { moved[o * count + order[i]] = rows[o * count + i] } }
            reordered = moved
        }
        let weights = KernelWeights(source: raw, reordered: reordered, bias: useBias ? try context.parameter(.biases) : nil,
                                    outputs: neurons, weightsPerOutput: input.count, affine: context.foldedAffine)
        return FusedKernel(DenseKernel(inputs: input.count, outputs: neurons, weights: weights,
                                       activation: context.fusedActivation ?? activation,
                                       channelsFirstInput: channelsFirst ? input : nil),
                           appliesFoldedAffine: true)
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
