/// What a ``Cumulative`` layer accumulates.
public enum CumulativeOperation: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Running sums (ONNX `CumSum`).
    case sum
    /// Running products (ONNX `CumProd`).
    case product

    /// The name used in summaries and model files.
    public var description: String { rawValue }
}

/// Running sums (or products) along one axis: `x --> Cumulative(.sum, axis: 1)`. With
/// `exclusive` each output leaves its own value out (the first is 0, or 1 for products); with
/// `reverse` it runs from the end of the axis. Axes count the batch as 0, which it never runs along.
public final class Cumulative: Layer {
    /// The operation.
    public let operation: CumulativeOperation
    /// The axis it runs along.
    public let axis: Int
    /// Whether each output leaves its own value out.
    public let exclusive: Bool
    /// Whether it runs from the end of the axis.
    public let reverse: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(_ operation: CumulativeOperation, axis: Int, exclusive: Bool = false, reverse: Bool = false, name: String? = nil) {
        self.operation = operation
        self.axis = axis
        self.exclusive = exclusive
        self.reverse = reverse
        self.name = name
    }

    /// `cumsum` or `cumprod`.
    public var namePrefix: String { operation == .sum ? "cumsum" : "cumprod" }

    /// The input's shape and type.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        _ = try LayoutAxes.resolve(axis, rank: inputs[0].rank)
        return inputs[0]
    }
    /// Integers too (the result has the input's type).
    public var acceptsTypedInputs: Bool { true }

    /// The running kernel (an integer result wrapped to its type).
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return IntegerResultKernel.bringing(
            CumulativeKernel(span: AxisSpan(dimensions: input.dimensions, axis: try LayoutAxes.resolve(axis, rank: input.rank)),
                             product: operation == .product, exclusive: exclusive, reverse: reverse),
            to: context.outputShape.elementType)
    }
}

extension Cumulative: ModelFileCodable {
    /// `Cumulative`.
    static var fileTypeName: String { "Cumulative" }

    /// Reads `operation` (required), `axis` (required), `exclusive` (false), `reverse` (false).
    convenience init(fields: JSONFields, name: String) throws {
        let operation: CumulativeOperation = try fields.choice("operation")
        self.init(operation, axis: try fields.int("axis"), exclusive: try fields.bool("exclusive", default: false),
                  reverse: try fields.bool("reverse", default: false), name: name)
    }

    /// `operation`, `axis`, `exclusive`, `reverse`.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("operation", .string(operation.rawValue)), ("axis", .int(axis)), ("exclusive", .bool(exclusive)), ("reverse", .bool(reverse))]
    }
}
