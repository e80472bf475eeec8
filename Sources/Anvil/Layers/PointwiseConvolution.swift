/// A 1×1 convolution (MobileNet's pointwise step): a per-pixel Dense over channels,
/// computed as one GEMM over the input without im2col.
public final class PointwiseConvolution: Layer, FusableLayer {
    /// Output channels.
    public let channels: Int
    /// Whether the layer adds a bias per output channel.
    public let useBias: Bool
    /// The activation applied to the output.
    public let activation: ActivationFunction
    /// The user's name for the layer.
    public let name: String?

    /// Creates a pointwise convolution.
    public init(channels: Int, useBias: Bool = true, activation: ActivationFunction = .none, name: String? = nil) {
        self.channels = channels
        self.useBias = useBias
        self.activation = activation
        self.name = name
    }

    /// `pointwise`.
    public var namePrefix: String { "pointwise" }

    /// Same height and width, `channels` channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        guard channels > 0 else { throw AnvilError(.invalidOption, "channels must be positive, got \(channels)") }
        _ = try checkedProduct([channels, inputs[0].channels], what: "weight tensor")
        return try inputs[0].windowOutput(height: inputs[0].height, width: inputs[0].width, channels: channels)
    }

    /// Weights `[out][in]` and (if `useBias`) biases.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        let weights = ParameterSpec(.weights, count: channels * inputs[0].channels)
        return useBias ? [weights, ParameterSpec(.biases, count: channels)] : [weights]
    }

    /// Output elements × input channels.
    public func macs(for inputs: [Shape], output: Shape) -> Int { saturatingProduct(output.count, inputs[0].channels) }

    /// A BatchNormalization, a residual `Add` (convolution kernels add it; see `makeConvolutionKernel`)
    /// and an activation.
    var absorbs: FusionCapabilities { .all }

    /// One GEMM over the input.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel { try makeFusedKernel(context).kernel }

    /// The kernel of ``makeKernel(_:)``, with a folded BatchNormalization in its weights.
    func makeFusedKernel(_ context: KernelContext) throws -> FusedKernel {
        let input = context.inputShapes[0]
        let geometry = try WindowGeometry(input: input, kernel: (1, 1), stride: (1, 1), dilation: (1, 1), padding: .valid)
        return try makeConvolutionKernel(context, geometry: geometry, inputChannels: input.channels,
                                         outputChannels: channels, groups: 1, useBias: useBias, activation: activation)
    }
}

extension PointwiseConvolution: ModelFileCodable {
    /// `PointwiseConvolution`.
    static var fileTypeName: String { "PointwiseConvolution" }

    /// Reads `channels` (required), `bias` and `activation`.
    convenience init(fields: JSONFields, name: String) throws {
        self.init(channels: try fields.int("channels"), useBias: try fields.bool("bias", default: true),
                  activation: try fields.activation("activation", default: .none), name: name)
    }

    /// Every option, defaults included.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("channels", .int(channels)), ("bias", .bool(useBias)), ("activation", .activation(activation))]
    }
}
