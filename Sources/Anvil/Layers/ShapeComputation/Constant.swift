/// A small constant tensor written in the model itself (ONNX `Constant`): the scalars and
/// vectors of shape arithmetic (`0`, `1`, a stride, a list of axes). It has no inputs and is
/// known when the plan is built. Weights are parameters, not constants.
///
/// ```swift
/// let one = Constant.tensor(.int64([1]))
/// ```
public final class Constant: Layer {
    /// The most elements a constant written in a model file holds.
    public static let maximumCount = 1 << 16

    /// The tensor.
    public let tensor: TensorValue
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(_ tensor: TensorValue, name: String? = nil) {
        self.tensor = tensor
        self.name = name
    }

    /// The constant as a tensor to chain layers onto: `[] --> Constant(value)`.
    public static func tensor(_ value: TensorValue, name: String? = nil) -> SymbolicTensor {
        [] --> Constant(value, name: name)
    }

    /// `constant`.
    public var namePrefix: String { "constant" }
    /// No inputs.
    public var inputCountRange: ClosedRange<Int> { 0 ... 0 }

    /// The tensor's shape.
    public func outputShape(for inputs: [Shape]) throws -> Shape { tensor.shape }

    /// The tensor.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? { tensor }

    /// Never runs: its value is known when the plan is built.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        throw AnvilError(.internalError, "Constant is known when the plan is built and never runs")
    }
}

extension Constant: ModelFileCodable {
    /// `Constant`.
    static var fileTypeName: String { "Constant" }

    /// Reads `elementType` (`"float32"`), `shape` (the axes after the batch axis) and `values`
    /// (row-major, at most ``maximumCount``).
    convenience init(fields: JSONFields, name: String) throws {
        let type = try fields.elementType("elementType", default: .float32)
        let dims = try fields.intArray("shape", counts: 0 ... Shape.maximumRank - 1)
        guard dims.allSatisfy({ $0 >= 0 }), let count = Shape(unchecked: dims).checkedCount, count <= Self.maximumCount else {
            throw AnvilError(.invalidFile, "\(fields.context): field 'shape' \(dims) must have non-negative axes and at most \(Self.maximumCount) elements")
        }
        let shape = Shape(unchecked: dims, elementType: type)
        let values = try fields.array("values")
        guard values.count == count else {
            throw AnvilError(.invalidFile, "\(fields.context): field 'values' has \(values.count) numbers; shape \(dims) needs \(count)")
        }
        if type.isInteger {
            self.init(try TensorValue(shape: shape, integers: try values.map { element in
                guard case .int(let number) = element else { throw AnvilError(.invalidFile, "\(fields.context): field 'values' must hold integers") }
                return Int64(number)
            }), name: name)
        } else {
            self.init(try TensorValue(shape: shape, floats: try values.map { element in
                switch element {
                case .int(let number): return Float(number)
                case .double(let number): return Float(number)
                default: throw AnvilError(.invalidFile, "\(fields.context): field 'values' must hold numbers")
                }
            }), name: name)
        }
    }

    /// `elementType`, `shape` and `values`.
    func encodeFields() throws -> [(String, JSONValue)] {
        let values: [JSONValue] = tensor.isInteger ? tensor.integers.map { .int(Int($0)) } : tensor.floats.map { .double(Double($0)) }
        return [("elementType", .string(tensor.shape.elementType.rawValue)), ("shape", .array(tensor.shape.dimensions.map { .int($0) })),
                ("values", .array(values))]
    }
}
