/// The numbers `start, start + delta, ...` below `limit` (above it for a negative `delta`) as a
/// vector (ONNX `Range`, NumPy `arange`): its three inputs are scalars known when the plan is
/// built (constants or shape computations), so the vector is made once per input size, as
/// the anchor grids of detection heads are. The element type is the inputs'.
///
/// ```swift
/// let columns = [zero, width, one] --> Arange()   // 0, 1, ..., W - 1 for each input size
/// ```
public final class Arange: Layer {
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(name: String? = nil) {
        self.name = name
    }

    /// `Range`.
    public var typeName: String { "Range" }
    /// `range`.
    public var namePrefix: String { "range" }
    /// Start, limit and delta.
    public var inputCountRange: ClosedRange<Int> { 3 ... 3 }
    /// Integer or float scalars.
    public var acceptsTypedInputs: Bool { true }

    /// The most elements a range may have.
    static let maximumCount = 1 << 28

    /// The elements, from the known scalars.
    func elements(_ inputs: [Shape], _ values: [TensorValue?]) throws -> TensorValue {
        let names = ["start", "limit", "delta"]
        var scalars: [TensorValue] = []
        for (index, value) in values.enumerated() {
            guard let value else {
                throw AnvilError(.invalidShape, "its \(names[index]) (input \(index + 1)) must be known when the plan is built: a constant or a shape computation")
            }
            guard value.count == 1 else { throw AnvilError(.invalidShape, "its \(names[index]) must be a scalar, got \(value.shape)") }
            scalars.append(value)
        }
        let type = scalars[0].shape.elementType
        guard scalars.allSatisfy({ $0.shape.elementType == type }) else {
            throw AnvilError(.invalidShape, "start, limit and delta must have one type, got \(scalars.map { "\($0.shape.elementType)" }.joined(separator: ", "))")
        }
        let (start, limit, delta) = (scalars[0].doubles[0], scalars[1].doubles[0], scalars[2].doubles[0])
        guard delta != 0, delta.isFinite, start.isFinite, limit.isFinite else {
            throw AnvilError(.invalidShape, "delta must be finite and not 0, and start and limit finite (start \(start), limit \(limit), delta \(delta))")
        }
        // ONNX: max(ceil((limit - start) / delta), 0) elements.
        let length = max(((limit - start) / delta).rounded(.up), 0)
        guard length <= Double(Self.maximumCount) else {
            throw AnvilError(.invalidShape, "range \(start) ..< \(limit) step \(delta) has \(length) elements, more than \(Self.maximumCount)")
        }
        let count = Int(length)
        let shape = Shape(unchecked: [count], elementType: type)
        if type.isInteger {
            let (s, d) = (scalars[0].integers[0], scalars[2].integers[0])
            return try TensorValue(shape: shape, integers: (0 ..< count).map { s + Int64($0) * d })
        }
        let (s, d) = (scalars[0].floats[0], scalars[2].floats[0])
        return try TensorValue(shape: shape, floats: (0 ..< count).map { s + Float($0) * d })
    }

    /// A vector of the range's length.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        throw AnvilError(.invalidShape, "its length follows from its inputs' values")
    }

    /// A vector of the range's length.
    public func outputShape(for inputs: [Shape], values: [TensorValue?]) throws -> Shape {
        try elements(inputs, values).shape
    }

    /// The range.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        try elements(inputs, values)
    }

    /// Never runs: its value is known when the plan is built.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        throw AnvilError(.internalError, "Range runs when the plan is built, never at predict")
    }
}

extension Arange: ModelFileCodable {
    /// `Range`.
    static var fileTypeName: String { "Range" }

    /// No options.
    convenience init(fields: JSONFields, name: String) throws {
        self.init(name: name)
    }

    /// No options.
    func encodeFields() throws -> [(String, JSONValue)] { [] }
}
