/// Which position an ``ArgReduce`` layer picks along its axis.
public enum ArgReduceOperation: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The position of the largest value (ONNX `ArgMax`).
    case argMax
    /// The position of the smallest value (ONNX `ArgMin`).
    case argMin

    /// The name used in summaries and model files.
    public var description: String { rawValue }
}

/// The position of the largest (or smallest) value along one axis, as a float32 index (exact
/// below 2²⁴): `logits --> ArgReduce(.argMax, axis: -1)`. Ties go to the first position, or the
/// last with `selectLastIndex`; a NaN counts as larger (and smaller) than every number, as in
/// NumPy. Axes count the batch as 0, which is never reduced. With `keepDimensions` (the default)
/// the axis stays with extent 1.
public final class ArgReduce: Layer {
    /// The operation.
    public let operation: ArgReduceOperation
    /// The axis searched.
    public let axis: Int
    /// Whether the axis stays, with extent 1.
    public let keepDimensions: Bool
    /// Whether ties go to the last position.
    public let selectLastIndex: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(_ operation: ArgReduceOperation, axis: Int, keepDimensions: Bool = true, selectLastIndex: Bool = false, name: String? = nil) {
        self.operation = operation
        self.axis = axis
        self.keepDimensions = keepDimensions
        self.selectLastIndex = selectLastIndex
        self.name = name
    }

    /// `argmax` or `argmin`.
    public var namePrefix: String { operation == .argMax ? "argmax" : "argmin" }

    /// The input's shape with the axis of extent 1, or removed.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0]
        let resolved = try LayoutAxes.resolve(axis, rank: input.rank)
        var dims = input.dimensions
        if keepDimensions { dims[resolved - 1] = 1 } else { dims.remove(at: resolved - 1) }
        return try Shape(dimensions: dims)
    }
    /// Integers and truth values are searched too (the position is float32 whatever the input).
    public var acceptsTypedInputs: Bool { true }

    /// The search kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return ArgReduceKernel(span: AxisSpan(dimensions: input.dimensions, axis: try LayoutAxes.resolve(axis, rank: input.rank)),
                               largest: operation == .argMax, last: selectLastIndex)
    }
}

extension ArgReduce: ModelFileCodable {
    /// `ArgReduce`.
    static var fileTypeName: String { "ArgReduce" }

    /// Reads `operation` (required), `axis` (required), `keepDimensions` (true), `selectLastIndex` (false).
    convenience init(fields: JSONFields, name: String) throws {
        let operation: ArgReduceOperation = try fields.choice("operation")
        self.init(operation, axis: try fields.int("axis"), keepDimensions: try fields.bool("keepDimensions", default: true),
                  selectLastIndex: try fields.bool("selectLastIndex", default: false), name: name)
    }

    /// `operation`, `axis`, `keepDimensions`, `selectLastIndex`.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("operation", .string(operation.rawValue)), ("axis", .int(axis)), ("keepDimensions", .bool(keepDimensions)),
         ("selectLastIndex", .bool(selectLastIndex))]
    }
}
