/// Which of ``TopK``'s two results a layer gives.
public enum TopKResult: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The k values.
    case values
    /// Their positions along the axis (float32, exact below 2²⁴).
    case indices

    /// The name used in summaries and model files.
    public var description: String { rawValue }
}

/// The `k` largest (or smallest) values along one axis, in order, best first; of equal values the
/// one at the lower position comes first (ONNX `TopK`): `scores --> TopK(k: 5, axis: -1)`. Its
/// values and their positions are two layers, `result: .values` and `.indices`, on the same input.
/// Axes count the batch as 0, which it never searches. A NaN counts as larger than every number.
public final class TopK: Layer {
    /// How many values are kept.
    public let k: Int
    /// The axis searched.
    public let axis: Int
    /// Whether the largest are kept (else the smallest).
    public let largest: Bool
    /// Which result this layer gives.
    public let result: TopKResult
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(k: Int, axis: Int = -1, largest: Bool = true, result: TopKResult = .values, name: String? = nil) {
        self.k = k
        self.axis = axis
        self.largest = largest
        self.result = result
        self.name = name
    }

    /// `topk`.
    public var namePrefix: String { "topk" }

    /// The input's shape with `k` along the axis; an error when the axis is shorter than `k`.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0]
        let resolved = try LayoutAxes.resolve(axis, rank: input.rank)
        guard k >= 1, k <= input.dimensions[resolved - 1] else {
            throw AnvilError(.invalidOption, "k \(k) must be in 1...\(input.dimensions[resolved - 1]), the extent of axis \(axis)")
        }
        var dims = input.dimensions
        dims[resolved - 1] = k
        return try Shape(dimensions: dims, elementType: result == .values ? input.elementType : .float32)
    }
    /// Integers and truth values too (values keep the input's type; positions are float32).
    public var acceptsTypedInputs: Bool { true }

    /// The selection kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return TopKKernel(span: AxisSpan(dimensions: input.dimensions, axis: try LayoutAxes.resolve(axis, rank: input.rank)),
                          k: k, largest: largest, indices: result == .indices)
    }
}

extension TopK: ModelFileCodable {
    /// `TopK`.
    static var fileTypeName: String { "TopK" }

    /// Reads `k` (required), `axis` (-1), `largest` (true), `result` (`"values"`).
    convenience init(fields: JSONFields, name: String) throws {
        let result: TopKResult = fields.has("result") ? try fields.choice("result") : .values
        self.init(k: try fields.int("k"), axis: try fields.int("axis", default: -1), largest: try fields.bool("largest", default: true),
                  result: result, name: name)
    }

    /// `k`, `axis`, `largest`, `result`.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("k", .int(k)), ("axis", .int(axis)), ("largest", .bool(largest)), ("result", .string(result.rawValue))]
    }
}
