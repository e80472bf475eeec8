/// Copies values of each item by position: output value `j` is the item's input value
/// `indices[j]` (row-major over the input's axes after the batch), or 0 where the index is −1.
/// One layer for the indexing operators whose indices are known when the model is made — ONNX
/// `GatherElements`, `GatherND`, `Gather` with an array of indices, `Tile`, `Trilu` (−1 where it
/// zeroes) — the positions worked out by whoever writes the model, the copy done here.
///
/// ```swift
/// // Reverse a 4-vector: output j is input 3 − j.
/// let reversed = x --> Take(shape: [4])
/// // with the parameter "<name>_indices" = [3, 2, 1, 0]
/// ```
public final class Take: Layer {
    /// The output's axes after the batch.
    public let shape: [Int]
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer; the positions are its ``ParameterKind/indices`` parameter.
    public init(shape: [Int], name: String? = nil) {
        self.shape = shape
        self.name = name
    }

    /// `take`.
    public var namePrefix: String { "take" }

    /// `shape`.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        guard shape.allSatisfy({ $0 > 0 }) else { throw AnvilError(.invalidOption, "shape \(shape) must have positive axes") }
        return try Shape(dimensions: shape, elementType: inputs[0].elementType)
    }
    /// Elements of any type (it moves them).
    public var acceptsTypedInputs: Bool { true }

    /// One position per output value.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        [ParameterSpec(.indices, count: shape.reduce(1, *))]
    }

    /// The copy kernel; an error for a position outside the input.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let count = context.inputShapes[0].count
        let values = try context.parameter(.indices).values
        var positions = [Int32](repeating: 0, count: values.count)
        for (j, value) in values.enumerated() {
            guard value == value.rounded(), value >= -1, value < Float(count) else {
                throw AnvilError(.invalidParameter, "indices[\(j)] is \(value); it must be −1 or a position in 0..<\(count) of the input's \(count) values")
            }
            positions[j] = Int32(value)
        }
        return TakeKernel(positions: positions, inputCount: count)
    }
}

extension Take: ModelFileCodable {
    /// `Take`.
    static var fileTypeName: String { "Take" }

    /// Reads `shape` (required; the output's axes after the batch).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(shape: try fields.intArray("shape", counts: 0 ... Shape.maximumRank - 1), name: name)
    }

    /// `shape`.
    func encodeFields() throws -> [(String, JSONValue)] { [("shape", .array(shape.map { .int($0) }))] }
}
