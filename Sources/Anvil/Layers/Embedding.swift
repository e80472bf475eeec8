/// Rows of a constant table picked by computed indices (ONNX `Gather` of a weight; an embedding
/// table read by token ids): `tokens --> Embedding(table: [vocabulary, width])`.
///
/// Each item's output is the table with axis `axis` replaced by the index tensor:
/// `table[..<axis] + indices + table[(axis + 1)...]`. An index counts from the end when negative
/// (−1 the last row); an index that is not a whole number inside the axis gives NaN values for its
/// row (a kernel cannot throw at `predict`; NaN makes the bad index visible downstream). The
/// table is the ``ParameterKind/constant`` parameter, row-major over `table`.
///
/// ```swift
/// let tokens = Input(shape: OpenShape(dimensions: [nil], elementType: .int64), name: "tokens")
/// let vectors = tokens --> Embedding(table: [30_522, 768])   // [N, tokens, 768]
/// ```
public final class Embedding: Layer {
    /// The table's axes (rank 1 to 7).
    public let table: [Int]
    /// The table axis the indices pick along.
    public let axis: Int
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer; the table is its ``ParameterKind/constant`` parameter.
    public init(table: [Int], axis: Int = 0, name: String? = nil) {
        self.table = table
        self.axis = axis
        self.name = name
    }

    /// `embedding`.
    public var namePrefix: String { "embedding" }
    /// Indices of any integer type (or float32 whole numbers).
    public var acceptsTypedInputs: Bool { true }

    /// `axis` counted from 0, checked against the table's rank.
    func resolvedAxis() throws -> Int {
        guard (1 ..< Shape.maximumRank).contains(table.count), table.allSatisfy({ $0 > 0 }) else {
            throw AnvilError(.invalidOption, "table \(table) needs 1 to \(Shape.maximumRank - 1) positive axes")
        }
        guard -table.count <= axis, axis < table.count else {
            throw AnvilError(.invalidOption, "axis \(axis) is out of range for a table of rank \(table.count)")
        }
        return axis < 0 ? axis + table.count : axis
    }

    /// The table's axes with `axis` replaced by the index tensor's (after the batch), float32.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let axis = try resolvedAxis()
        let indices = inputs[0]
        guard indices.elementType != .bool, indices.elementType != .bfloat16 else {
            throw AnvilError(.invalidShape, "indices must be integers, got \(indices.elementType)")
        }
        let dims = Array(table[..<axis]) + indices.dimensions + Array(table[(axis + 1)...])
        guard dims.count < Shape.maximumRank else {
            throw AnvilError(.invalidShape, "the output has \(dims.count) axes after the batch; at most \(Shape.maximumRank - 1)")
        }
        _ = try checkedProduct(dims, what: "output")
        return try Shape(dimensions: dims)
    }

    /// The table.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        [ParameterSpec(.constant, count: table.reduce(1, *))]
    }

    /// The row-copy kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let axis = try resolvedAxis()
        return EmbeddingKernel(table: try context.parameter(.constant), outer: table[..<axis].reduce(1, *), extent: table[axis],
                               rowLength: table[(axis + 1)...].reduce(1, *), indexCount: context.inputShapes[0].count)
    }
}

extension Embedding: ModelFileCodable {
    /// `Embedding`.
    static var fileTypeName: String { "Embedding" }

    /// Reads `table` (required: the table's axes) and `axis` (0).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(table: try fields.intArray("table", counts: 1 ... Shape.maximumRank - 1), axis: try fields.int("axis", default: 0), name: name)
    }

    /// `table`, `axis`.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("table", .array(table.map { .int($0) })), ("axis", .int(axis))]
    }
}
