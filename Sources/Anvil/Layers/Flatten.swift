/// Flattens the axes from `axis` on into one (ONNX/Keras `Flatten`): with the default `axis: 1`
/// an image `H × W × C` becomes a vector of `H·W·C`; `axis: 2` on an image gives a sequence
/// `[N, H, W·C]`. Axes count the batch axis as 0, which is never flattened into.
public final class Flatten: LayoutLayer {
    /// The order of the flattened values.
    public enum Order: String, Sendable {
        /// `H, W, C`: channels-last, Anvil's and Forge's own order.
        case channelsLast = "hwc"
        /// `C, H, W`: what flattening an NCHW tensor gives in PyTorch and ONNX (`axis: 1` only).
        case channelsFirst = "chw"
    }

    /// The order of the flattened values.
    public let order: Order
    /// The first axis flattened (1 up to the input's rank; the rank itself appends an axis of 1).
    public let axis: Int
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(axis: Int = 1, order: Order = .channelsLast, name: String? = nil) {
        self.axis = axis
        self.order = order
        self.name = name
    }

    /// Creates the layer flattening everything after the batch axis in `order`.
    public convenience init(order: Order, name: String? = nil) {
        self.init(axis: 1, order: order, name: name)
    }

    /// `flatten`.
    public var namePrefix: String { "flatten" }

    /// `[N, product of the axes from 1 to axis - 1, product of the rest]`.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0], rank = input.rank
        let axis = self.axis < 0 ? self.axis + rank : self.axis
        guard axis >= 1, axis <= rank else {
            throw AnvilError(.invalidOption, "axis \(self.axis) is out of range for a rank-\(rank) input (1...\(rank); the batch axis stays)")
        }
        guard order == .channelsLast || axis == 1 else {
            throw AnvilError(.invalidOption, "order \"chw\" flattens from axis 1 only, got axis \(self.axis)")
        }
        let dims = input.dimensions
        if axis == 1 { return Shape.vector(input.count).with(elementType: input.elementType) }
        return Shape.sequence(length: dims[..<(axis - 1)].reduce(1, *), channels: dims[(axis - 1)...].reduce(1, *))
            .with(elementType: input.elementType)
    }

    /// Any element type: the values only move.
    public var acceptsTypedInputs: Bool { true }

    /// The known inputs' elements moved, when every input is known.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        try movedValue(for: inputs, values: values)
    }

    /// The values keep their order, unless flattened channels first.
    func copies(for inputs: [Shape], output: Shape) throws -> [StridedCopy]? {
        guard order == .channelsFirst else { return nil }
        let input = inputs[0]
        let strides = StridedCopy.contiguousStrides([input.height * input.width, input.channels])
        return [StridedCopy(input: 0, dims: [input.channels, input.height * input.width], inputStrides: [strides[1], strides[0]],
                            outputStrides: StridedCopy.contiguousStrides([input.channels, input.height * input.width]))]
    }

    /// A copy (a reorder for `.channelsFirst`).
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        CopyKernel(shape: context.inputShapes[0], channelsFirst: order == .channelsFirst, activation: .none)
    }
}

extension Flatten: ModelFileCodable {
    /// `Flatten`.
    static var fileTypeName: String { "Flatten" }

    /// Reads `order` (`"hwc"`) and `axis` (1).
    convenience init(fields: JSONFields, name: String) throws {
        let order = try fields.string("order", default: "hwc")
        guard let parsed = Order(rawValue: order) else {
            throw AnvilError(.invalidFile, "\(fields.context): field 'order' must be \"hwc\" or \"chw\"")
        }
        self.init(axis: try fields.int("axis", default: 1), order: parsed, name: name)
    }

    /// `order` and `axis`.
    func encodeFields() throws -> [(String, JSONValue)] { [("order", .string(order.rawValue)), ("axis", .int(axis))] }
}
