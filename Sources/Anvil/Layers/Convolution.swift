/// A 2-D convolution with optional bias and fused activation.
///
/// ```swift
/// input --> Convolution(kernel: (3, 3), channels: 64, activation: .relu, name: "conv1_1")
/// ```
///
/// Pairs are `(height, width)`. Padding defaults to `.same`, as in Forge. Weights hold
/// `channels × kh × kw × (inputChannels / groups)` values (layout declared at compile time).
public final class Convolution: Layer, FusableLayer {
    /// Kernel size.
    public let kernel: (height: Int, width: Int)
    /// Output channels.
    public let channels: Int
    /// Step between windows.
    public let stride: (height: Int, width: Int)
    /// Border handling.
    public let padding: Padding
    /// Spacing between kernel taps.
    public let dilation: (height: Int, width: Int)
    /// Channel groups: input and output channels split into this many independent convolutions.
    public let groups: Int
    /// Whether the layer adds a bias per output channel.
    public let useBias: Bool
    /// The activation applied to the output.
    public let activation: ActivationFunction
    /// The user's name for the layer.
    public let name: String?

    /// Creates a convolution.
    public init(kernel: (Int, Int), channels: Int, stride: (Int, Int) = (1, 1), padding: Padding = .same,
                dilation: (Int, Int) = (1, 1), groups: Int = 1, useBias: Bool = true,
                activation: ActivationFunction = .none, name: String? = nil) {
        self.kernel = kernel
        self.channels = channels
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.groups = groups
        self.useBias = useBias
        self.activation = activation
        self.name = name
    }

    /// `conv`.
    public var namePrefix: String { "conv" }

    func geometry(_ input: Shape) throws -> WindowGeometry {
        guard channels > 0 else { throw AnvilError(.invalidOption, "channels must be positive, got \(channels)") }
        guard groups > 0 else { throw AnvilError(.invalidOption, "groups must be positive, got \(groups)") }
        guard input.channels % groups == 0, channels % groups == 0 else {
            throw AnvilError(.invalidShape, "groups \(groups) must divide input channels \(input.channels) and output channels \(channels)")
        }
        return try WindowGeometry(input: input, kernel: kernel, stride: stride, dilation: dilation, padding: padding)
    }

    /// Height and width from the window geometry; `channels` channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let g = try geometry(inputs[0])
        _ = try checkedProduct([channels, kernel.0, kernel.1, inputs[0].channels / groups], what: "weight tensor")
        return try inputs[0].windowOutput(height: g.outputHeight, width: g.outputWidth, channels: channels)
    }

    /// Weights and (if `useBias`) biases.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        let weights = ParameterSpec(.weights, count: channels * kernel.0 * kernel.1 * (inputs[0].channels / groups))
        return useBias ? [weights, ParameterSpec(.biases, count: channels)] : [weights]
    }

    /// Output pixels × channels × taps per output.
    public func macs(for inputs: [Shape], output: Shape) -> Int {
        saturatingProduct(output.count, kernel.0, kernel.1, inputs[0].channels / groups)
    }

    /// A BatchNormalization, a residual `Add` (convolution kernels add it; see `makeConvolutionKernel`)
    /// and an activation.
    var absorbs: FusionCapabilities { .all }

    /// Winograd for 3×3 stride-1 layers where it is faster, im2col + GEMM otherwise, or the
    /// depthwise kernel when `groups` equals the input channels.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel { try makeFusedKernel(context).kernel }

    /// The kernel of ``makeKernel(_:)``, with a folded BatchNormalization in its weights.
    func makeFusedKernel(_ context: KernelContext) throws -> FusedKernel {
        let input = context.inputShapes[0]
        return try makeConvolutionKernel(context, geometry: try geometry(input).absorbing(context.absorbedPad),
                                         inputChannels: input.channels,
                                         outputChannels: channels, groups: groups, useBias: useBias, activation: activation)
    }
}

extension Convolution: PadAbsorbingLayer {
    /// The window over `input`: zero padding is zero input to a convolution.
    func absorbableWindow(over input: Shape) -> WindowGeometry? { try? geometry(input) }
}

extension Convolution: ModelFileCodable {
    /// `Convolution`.
    static var fileTypeName: String { "Convolution" }

    /// Reads `kernel` and `channels` (required), `stride`, `padding` (`"same"`), `dilation`,
    /// `groups`, `bias` and `activation`.
    convenience init(fields: JSONFields, name: String) throws {
        self.init(kernel: try fields.pair("kernel"), channels: try fields.int("channels"),
                  stride: try fields.pair("stride", default: (1, 1)),
                  padding: try fields.padding("padding", default: .same),
                  dilation: try fields.pair("dilation", default: (1, 1)), groups: try fields.int("groups", default: 1),
                  useBias: try fields.bool("bias", default: true),
                  activation: try fields.activation("activation", default: .none), name: name)
    }

    /// Every option, defaults included.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("kernel", .pair(kernel)), ("channels", .int(channels)), ("stride", .pair(stride)),
         ("padding", .padding(padding)), ("dilation", .pair(dilation)), ("groups", .int(groups)),
         ("bias", .bool(useBias)), ("activation", .activation(activation))]
    }
}
