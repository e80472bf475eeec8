/// What a ``Reduce`` layer computes over the values it reduces.
public enum ReduceOperation: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Σ x (ONNX `ReduceSum`).
    case sum
    /// Σ x / n (ONNX `ReduceMean`).
    case mean
    /// The largest (ONNX `ReduceMax`).
    case maximum
    /// The smallest (ONNX `ReduceMin`).
    case minimum
    /// Π x (ONNX `ReduceProd`).
    case product
    /// Σ |x| (ONNX `ReduceL1`).
    case l1
    /// √(Σ x²) (ONNX `ReduceL2`; `F.normalize`'s norm).
    case l2
    /// log Σ eˣ, computed as m + log Σ eˣ⁻ᵐ with m the largest (ONNX `ReduceLogSumExp`).
    case logSumExp
    /// Σ x² (ONNX `ReduceSumSquare`).
    case sumSquare

    /// The name used in summaries and model files (`"sum"`, `"l2"`, …).
    public var description: String { rawValue }
}

/// Reduces a tensor over some of its axes: `x --> Reduce(.mean, axes: [-1])` averages each
/// token's features, `Reduce(.l2, axes: [-1])` is the norm `F.normalize` divides by. Axes count
/// the batch axis as 0 (which is never reduced); negative axes count from the end. With
/// `keepDimensions` (the default) a reduced axis stays with extent 1, as ONNX's `keepdims`.
public final class Reduce: Layer {
    /// The operation.
    public let operation: ReduceOperation
    /// The axes reduced (at least one, none twice, not the batch).
    public let axes: [Int]
    /// Whether reduced axes stay, with extent 1.
    public let keepDimensions: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(_ operation: ReduceOperation, axes: [Int], keepDimensions: Bool = true, name: String? = nil) {
        self.operation = operation
        self.axes = axes
        self.keepDimensions = keepDimensions
        self.name = name
    }

    /// `reduce`.
    public var namePrefix: String { "reduce" }

    /// The reduced axes of a tensor of `rank` (counting the batch axis), each in `1 ..< rank`.
    func reducedAxes(rank: Int) throws -> Set<Int> {
        guard !axes.isEmpty else { throw AnvilError(.invalidOption, "axes must name at least one axis") }
        let resolved = try Set(axes.map { try LayoutAxes.resolve($0, rank: rank, option: "axis") })
        guard resolved.count == axes.count else { throw AnvilError(.invalidOption, "axes \(axes) name an axis twice") }
        return resolved
    }

    /// The input's shape with the reduced axes of extent 1, or removed.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0]
        let reduced = try reducedAxes(rank: input.rank)
        let dims = input.dimensions.enumerated().compactMap { index, extent -> Int? in
            reduced.contains(index + 1) ? (keepDimensions ? 1 : nil) : extent
        }
        return try Shape(dimensions: dims, elementType: input.elementType)
    }

    /// Integers and truth values too (the result has the input's type).
    public var acceptsTypedInputs: Bool { true }

    /// The reduction kernel (an integer result truncated and wrapped to its type).
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return IntegerResultKernel.bringing(ReduceKernel(operation: operation, dimensions: input.dimensions, reduced: try reducedAxes(rank: input.rank)),
                                            to: context.outputShape.elementType)
    }
}

extension Reduce: ModelFileCodable {
    /// `Reduce`.
    static var fileTypeName: String { "Reduce" }

    /// Reads `operation` (required), `axes` (required) and `keepDimensions` (true).
    convenience init(fields: JSONFields, name: String) throws {
        let operation: ReduceOperation = try fields.choice("operation")
        self.init(operation, axes: try fields.intArray("axes", counts: 1 ... Shape.maximumRank - 1),
                  keepDimensions: try fields.bool("keepDimensions", default: true), name: name)
    }

    /// `operation`, `axes`, `keepDimensions`.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("operation", .string(operation.rawValue)), ("axes", .array(axes.map { .int($0) })), ("keepDimensions", .bool(keepDimensions))]
    }
}
