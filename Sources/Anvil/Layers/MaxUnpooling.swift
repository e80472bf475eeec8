/// Puts each pooled maximum back where it came from, zeros elsewhere (ONNX `MaxUnpool`,
/// PyTorch's `MaxUnpool2d`): `[pooled, indices] --> MaxUnpooling(kernel: (2, 2))`.
///
/// The values and their positions are both `h × w × C`; a position is ONNX's flat index into
/// the whole batch of the unpooled size `N × C × H₀ × W₀` (as ``MaxPoolingIndices`` writes
/// it), where `H₀ = (h − 1)·stride − pads + kernel` (likewise `W₀`). The output is `H₀ × W₀ × C`,
/// or `outputSize` when given (at least that large: the extra rows and columns, at the bottom
/// and right, stay zero, as ONNX's reference places them). A position that is not an integer
/// inside the batch is skipped; of two values given the same position, the later one stays.
public final class MaxUnpooling: Layer {
    /// The pooling window's size.
    public let kernel: (height: Int, width: Int)
    /// The pooling's step (defaults to the window size).
    public let stride: (height: Int, width: Int)
    /// The pooling's pads (`.valid` for none, or `.explicit`).
    public let padding: Padding
    /// The output's height and width; nil: the unpooled size.
    public let outputSize: (height: Int, width: Int)?
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(kernel: (Int, Int), stride: (Int, Int)? = nil, padding: Padding = .valid, outputSize: (Int, Int)? = nil, name: String? = nil) {
        self.kernel = kernel
        self.stride = stride ?? kernel
        self.padding = padding
        self.outputSize = outputSize.map { (height: $0.0, width: $0.1) }
        self.name = name
    }

    /// `maxunpool`.
    public var namePrefix: String { "maxunpool" }
    /// The pooled values and their positions.
    public var inputCountRange: ClosedRange<Int> { 2 ... 2 }
    /// The positions are integers.
    public var acceptsTypedInputs: Bool { true }

    /// The unpooled height and width for a pooled `input`.
    func unpooledSize(_ input: Shape) throws -> (height: Int, width: Int) {
        guard kernel.height > 0, kernel.width > 0, stride.height > 0, stride.width > 0 else {
            throw AnvilError(.invalidOption, "kernel \(kernel.height)x\(kernel.width) and stride \(stride.height)x\(stride.width) must be positive")
        }
        let pads: (Int, Int, Int, Int)
        switch padding {
        case .valid: pads = (0, 0, 0, 0)
        case .explicit(let t, let l, let b, let r): pads = (t, l, b, r)
        case .same: throw AnvilError(.invalidOption, "padding must be explicit or valid (the pooling's pads), got same")
        }
        // (Bounded as a pooling window's are, so that the sizes below cannot overflow.)
        let limit = 1 << 20
        guard max(kernel.height, kernel.width, stride.height, stride.width) <= limit,
              [pads.0, pads.1, pads.2, pads.3].allSatisfy({ (0 ... limit).contains($0) }) else {
            throw AnvilError(.invalidOption, "kernel \(kernel.height)x\(kernel.width), stride \(stride.height)x\(stride.width) and padding \(padding) must be at most \(limit), pads not negative")
        }
        let height = (input.height - 1) * stride.height - pads.0 - pads.2 + kernel.height
        let width = (input.width - 1) * stride.width - pads.1 - pads.3 + kernel.width
        guard height > 0, width > 0 else {
            throw AnvilError(.invalidOption, "kernel \(kernel.height)x\(kernel.width), stride and padding \(padding) unpool \(input.height)x\(input.width) to \(height)x\(width), which is empty")
        }
        return (height, width)
    }

    /// `outputSize`, or the unpooled size, with the input's channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let values = inputs[0], indices = inputs[1]
        guard values.rank == 4, values.elementType == .float32 else { throw AnvilError(.invalidShape, "unpools a float32 image H × W × C, got \(values)") }
        guard indices.dimensions == values.dimensions else {
            throw AnvilError(.invalidShape, "needs one position per value: indices \(indices) for values \(values)")
        }
        let unpooled = try unpooledSize(values)
        let size = outputSize ?? unpooled
        guard size.height >= unpooled.height, size.width >= unpooled.width else {
            throw AnvilError(.invalidOption, "outputSize \(size.height)x\(size.width) is smaller than the unpooled size \(unpooled.height)x\(unpooled.width)")
        }
        return Shape(height: size.height, width: size.width, channels: values.channels)
    }

    /// The scattering kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0], output = context.outputShape
        let unpooled = try unpooledSize(input)
        return MaxUnpoolingKernel(inputCount: input.count, channels: input.channels, unpooledHeight: unpooled.height,
                                  unpooledWidth: unpooled.width, outputHeight: output.height, outputWidth: output.width)
    }
}

extension MaxUnpooling: ModelFileCodable {
    /// `MaxUnpooling`.
    static var fileTypeName: String { "MaxUnpooling" }

    /// Reads `kernel` (required), `stride` (= kernel), `padding` (`"valid"`) and `outputSize` (absent: the unpooled size).
    convenience init(fields: JSONFields, name: String) throws {
        let kernel = try fields.pair("kernel")
        self.init(kernel: kernel, stride: try fields.pair("stride", default: kernel), padding: try fields.padding("padding", default: .valid),
                  outputSize: fields.has("outputSize") ? try fields.pair("outputSize") : nil, name: name)
    }

    /// Every option (`outputSize` only when set).
    func encodeFields() throws -> [(String, JSONValue)] {
        [("kernel", .pair(kernel)), ("stride", .pair(stride)), ("padding", .padding(padding))]
            + (outputSize.map { [("outputSize", JSONValue.pair($0))] } ?? [])
    }
}
