/// Deformable convolution, v1 and v2 (ONNX `DeformConv`, torchvision's `deform_conv2d`):
/// `[image, offsets] --> DeformableConvolution(channels: 64, kernel: (3, 3))`, or
/// `[image, offsets, mask]` for v2.
///
/// Each kernel cell of each output pixel reads the image not at its grid position but moved by
/// a learned offset `(Δy, Δx)`, bilinearly interpolated (zero outside the image), times the
/// cell's mask value when a mask is given. The image is `H × W × C`; the offsets are
/// `Ho × Wo × (offsetGroups·kh·kw·2)`, in ONNX's channel order (offset group, kernel row,
/// kernel column, then Δy before Δx); the mask `Ho × Wo × (offsetGroups·kh·kw)`. Input channels
/// split into `offsetGroups` consecutive groups, each moved by its own offsets, and into
/// `groups` for the convolution as in a grouped ``Convolution``. The weights (`W`) are declared
/// in the model's layout like a convolution's, `[out][in/groups][kh][kw]` in PyTorch's; the
/// biases (`b`) one per output channel.
public final class DeformableConvolution: Layer {
    /// Output channels.
    public let channels: Int
    /// The kernel's height and width.
    public let kernel: (height: Int, width: Int)
    /// Step between output pixels.
    public let stride: (height: Int, width: Int)
    /// Border handling.
    public let padding: Padding
    /// Spacing between kernel cells.
    public let dilation: (height: Int, width: Int)
    /// Convolution groups (input and output channels split alike).
    public let groups: Int
    /// Groups of input channels sharing one set of offsets (and mask).
    public let offsetGroups: Int
    /// Whether a bias is added.
    public let useBias: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(channels: Int, kernel: (Int, Int), stride: (Int, Int) = (1, 1), padding: Padding = .valid, dilation: (Int, Int) = (1, 1),
                groups: Int = 1, offsetGroups: Int = 1, useBias: Bool = true, name: String? = nil) {
        self.channels = channels
        self.kernel = kernel
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.groups = groups
        self.offsetGroups = offsetGroups
        self.useBias = useBias
        self.name = name
    }

    /// `deformconv`.
    public var namePrefix: String { "deformconv" }
    /// The image, the offsets and, for v2, the mask.
    public var inputCountRange: ClosedRange<Int> { 2 ... 3 }

    /// The windows over `input`.
    func geometry(_ input: Shape) throws -> WindowGeometry {
        try WindowGeometry(input: input, kernel: kernel, stride: stride, dilation: dilation, padding: padding)
    }

    /// The convolution's output size with `channels`; the offsets and mask must match it.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        guard channels > 0 else { throw AnvilError(.invalidOption, "channels must be positive, got \(channels)") }
        guard groups > 0, offsetGroups > 0 else {
            throw AnvilError(.invalidOption, "groups and offsetGroups must be positive, got \(groups) and \(offsetGroups)")
        }
        let image = inputs[0]
        guard image.rank == 4 else { throw AnvilError(.invalidShape, "convolves an image H × W × C, got \(image)") }
        guard image.channels % groups == 0, channels % groups == 0 else {
            throw AnvilError(.invalidShape, "groups \(groups) must divide the input channels \(image.channels) and the output channels \(channels)")
        }
        guard image.channels % offsetGroups == 0 else {
            throw AnvilError(.invalidShape, "offsetGroups \(offsetGroups) must divide the input channels \(image.channels)")
        }
        let g = try geometry(image)
        let cells = kernel.height * kernel.width
        let expected = [Shape(height: g.outputHeight, width: g.outputWidth, channels: offsetGroups * cells * 2),
                        Shape(height: g.outputHeight, width: g.outputWidth, channels: offsetGroups * cells)]
        for (i, what) in ["offsets", "mask"].enumerated() where i + 1 < inputs.count {
            guard inputs[i + 1].dimensions == expected[i].dimensions else {
                throw AnvilError(.invalidShape, "needs \(what) \(expected[i]) (offsetGroups \(offsetGroups) × kernel \(kernel.height)x\(kernel.width)\(i == 0 ? " × (Δy, Δx)" : "") per output pixel), got \(inputs[i + 1])")
            }
        }
        return Shape(height: g.outputHeight, width: g.outputWidth, channels: channels)
    }

    /// The weights and, with `useBias`, the biases.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        let weights = ParameterSpec(.weights, count: saturatingProduct(channels, inputs[0].channels / max(groups, 1), kernel.height, kernel.width))
        return useBias ? [weights, ParameterSpec(.biases, count: channels)] : [weights]
    }

    /// A grouped convolution's multiply-adds plus four taps per sampled value.
    public func macs(for inputs: [Shape], output: Shape) -> Int {
        let cells = kernel.height * kernel.width
        return saturatingProduct(output.height, output.width, cells, channels * inputs[0].channels / max(groups, 1) + 4 * inputs[0].channels)
    }

    /// The sampling convolution kernel, its weights reordered to `[out][kh][kw][in/groups]`.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        let raw = try context.parameter(.weights)
        let weights = WeightReorder.convolution(raw.buffer, layout: context.layout, outputs: channels, kernelHeight: kernel.height,
                                                kernelWidth: kernel.width, inputs: input.channels / groups) ?? Array(raw.buffer)
        let biases = useBias ? Array(try context.parameter(.biases).buffer) : [Float](repeating: 0, count: channels)
        return DeformableConvolutionKernel(geometry: try geometry(input), inputChannels: input.channels, outputChannels: channels,
                                           groups: groups, offsetGroups: offsetGroups, hasMask: context.inputShapes.count == 3,
                                           weights: weights, biases: biases)
    }
}

extension DeformableConvolution: ModelFileCodable {
    /// `DeformableConvolution`.
    static var fileTypeName: String { "DeformableConvolution" }

    /// Reads `channels` and `kernel` (required), `stride` ((1, 1)), `padding` (`"valid"`),
    /// `dilation` ((1, 1)), `groups` and `offsetGroups` (1), `bias` (true).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(channels: try fields.int("channels"), kernel: try fields.pair("kernel"), stride: try fields.pair("stride", default: (1, 1)),
                  padding: try fields.padding("padding", default: .valid), dilation: try fields.pair("dilation", default: (1, 1)),
                  groups: try fields.int("groups", default: 1), offsetGroups: try fields.int("offsetGroups", default: 1),
                  useBias: try fields.bool("bias", default: true), name: name)
    }

    /// Every option.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("channels", .int(channels)), ("kernel", .pair(kernel)), ("stride", .pair(stride)), ("padding", .padding(padding)),
         ("dilation", .pair(dilation)), ("groups", .int(groups)), ("offsetGroups", .int(offsetGroups)), ("bias", .bool(useBias))]
    }
}
