/// Rounds each value to the nearest one a narrower float format holds (ONNX `Cast` of a computed
/// tensor to `float16` or `bfloat16`), ties to even, NaN kept, overflow infinite; the result is
/// still float32, as every layer after it computes, holding exactly the rounded values.
///
/// ```swift
/// let half = x --> FloatRounding(to: .float16)
/// ```
public final class FloatRounding: Layer {
    /// The format rounded to.
    public let format: FloatFormat
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(to format: FloatFormat, name: String? = nil) {
        self.format = format
        self.name = name
    }

    /// `round`.
    public var namePrefix: String { "round" }

    /// The input's shape (float32).
    public func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0] }

    /// The rounding of each element.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        FloatRoundingKernel(format: format, count: context.inputShapes[0].count)
    }
}

extension FloatRounding: ModelFileCodable {
    /// `FloatRounding`.
    static var fileTypeName: String { "FloatRounding" }

    /// Reads `to` (required: `float16` or `bfloat16`).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(to: try fields.choice("to"), name: name)
    }

    /// `to`.
    func encodeFields() throws -> [(String, JSONValue)] { [("to", .string(format.rawValue))] }
}
