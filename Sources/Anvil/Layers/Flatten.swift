/// Flattens `H × W × C` into `1 × 1 × (H·W·C)`.
public final class Flatten: Layer {
    /// The order of the flattened values.
    public enum Order: String, Sendable {
        /// `H, W, C`: channels-last, Anvil's and Forge's own order.
        case channelsLast = "hwc"
        /// `C, H, W`: what flattening an NCHW tensor gives in PyTorch and ONNX.
        case channelsFirst = "chw"
    }

    /// The order of the flattened values.
    public let order: Order
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(order: Order = .channelsLast, name: String? = nil) {
        self.order = order
        self.name = name
    }

    /// `flatten`.
    public var namePrefix: String { "flatten" }

    /// `1 × 1 × (H·W·C)`.
    public func outputShape(for inputs: [Shape]) throws -> Shape { .vector(inputs[0].count) }

    /// A copy (a reorder for `.channelsFirst`).
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        CopyKernel(shape: context.inputShapes[0], channelsFirst: order == .channelsFirst, activation: .none)
    }
}

extension Flatten: ModelFileCodable {
    /// `Flatten`.
    static var fileTypeName: String { "Flatten" }

    /// Reads `order` (`"hwc"`).
    convenience init(fields: JSONFields, name: String) throws {
        let order = try fields.string("order", default: "hwc")
        guard let parsed = Order(rawValue: order) else {
            throw AnvilError(.invalidFile, "\(fields.context): field 'order' must be \"hwc\" or \"chw\"")
        }
        self.init(order: parsed, name: name)
    }

    /// `order`.
    func encodeFields() throws -> [(String, JSONValue)] { [("order", .string(order.rawValue))] }
}
