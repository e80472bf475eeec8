/// A depthwise convolution: each input channel is convolved with its own `multiplier`
/// kernels (MobileNet). Output channels = input channels × multiplier, ordered `c·m + j`.
///
/// Weights hold `channels·m × kh × kw` values (Forge layout `[c·m][kh][kw]`).
public final class DepthwiseConvolution: Layer, FusableLayer {
    /// Kernel size.
    public let kernel: (height: Int, width: Int)
    /// Output channels per input channel.
    public let multiplier: Int
    /// Step between windows.
    public let stride: (height: Int, width: Int)
    /// Border handling.
    public let padding: Padding
    /// Spacing between kernel taps.
    public let dilation: (height: Int, width: Int)
    /// Whether the layer adds a bias per output channel.
    public let useBias: Bool
    /// The activation applied to the output.
    public let activation: ActivationFunction
    /// The user's name for the layer.
    public let name: String?

    /// Creates a depthwise convolution.
    public init(kernel: (Int, Int), multiplier: Int = 1, stride: (Int, Int) = (1, 1), padding: Padding = .same,
                dilation: (Int, Int) = (1, 1), useBias: Bool = true, activation: ActivationFunction = .none,
                name: String? = nil) {
        self.kernel = kernel
        self.multiplier = multiplier
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.useBias = useBias
        self.activation = activation
        self.name = name
    }

    /// A BatchNormalization and an activation; a residual `Add` stays a step of its own.
    var absorbs: FusionCapabilities { [.batchNormalization, .activation] }

    /// `depthwise`.
    public var namePrefix: String { "depthwise" }

    func geometry(_ input: Shape) throws -> WindowGeometry {
        guard multiplier > 0 else { throw AnvilError(.invalidOption, "multiplier must be positive, got \(multiplier)") }
        return try WindowGeometry(input: input, kernel: kernel, stride: stride, dilation: dilation, padding: padding)
    }

    /// Same channels × multiplier.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let g = try geometry(inputs[0])
        let channels = try checkedProduct([inputs[0].channels, multiplier], what: "output channels")
        _ = try checkedProduct([channels, kernel.0, kernel.1], what: "weight tensor")
        return try inputs[0].windowOutput(height: g.outputHeight, width: g.outputWidth, channels: channels)
    }

    /// Weights and (if `useBias`) biases.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        let channels = inputs[0].channels * multiplier
        let weights = ParameterSpec(.weights, count: channels * kernel.0 * kernel.1)
        return useBias ? [weights, ParameterSpec(.biases, count: channels)] : [weights]
    }

    /// Output elements × taps.
    public func macs(for inputs: [Shape], output: Shape) -> Int { saturatingProduct(output.count, kernel.0, kernel.1) }

    /// The direct depthwise kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel { try makeFusedKernel(context).kernel }

    /// The kernel of ``makeKernel(_:)``, with a folded BatchNormalization in its weights.
    func makeFusedKernel(_ context: KernelContext) throws -> FusedKernel {
        let input = context.inputShapes[0]
        let outputs = input.channels * multiplier
        let g = try geometry(input).absorbing(context.absorbedPad)
        if input.channels == 1 {  // a single group: an ordinary convolution
            return try makeConvolutionKernel(context, geometry: g, inputChannels: 1, outputChannels: outputs,
                                             groups: 1, useBias: useBias, activation: activation)
        }
        return try makeConvolutionKernel(context, geometry: g, inputChannels: input.channels, outputChannels: outputs,
                                         groups: input.channels, useBias: useBias, activation: activation)
    }
}

extension DepthwiseConvolution: PadAbsorbingLayer {
    /// The window over `input`: zero padding is zero input to a convolution.
    func absorbableWindow(over input: Shape) -> WindowGeometry? { try? geometry(input) }
}

extension DepthwiseConvolution: ModelFileCodable {
    /// `DepthwiseConvolution`.
    static var fileTypeName: String { "DepthwiseConvolution" }

    /// Reads `kernel` (required), `multiplier`, `stride`, `padding` (`"same"`), `dilation`,
    /// `bias` and `activation`.
    convenience init(fields: JSONFields, name: String) throws {
        self.init(kernel: try fields.pair("kernel"), multiplier: try fields.int("multiplier", default: 1),
                  stride: try fields.pair("stride", default: (1, 1)),
                  padding: try fields.padding("padding", default: .same),
                  dilation: try fields.pair("dilation", default: (1, 1)),
                  useBias: try fields.bool("bias", default: true),
                  activation: try fields.activation("activation", default: .none), name: name)
    }

    /// Every option, defaults included.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("kernel", .pair(kernel)), ("multiplier", .int(multiplier)), ("stride", .pair(stride)),
         ("padding", .padding(padding)), ("dilation", .pair(dilation)),
         ("bias", .bool(useBias)), ("activation", .activation(activation))]
    }
}
