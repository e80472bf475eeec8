/// A tensor of the axes its input holds, every element `value` (ONNX `ConstantOfShape`,
/// `torch.full`): the input is an int64 vector known when the plan is built (the axes after the
/// batch axis), so the tensor is made once per input size.
///
/// ```swift
/// let zeros = (image --> ShapeOf()) --> ConstantOfShape(0)   // zeros like the image
/// ```
public final class ConstantOfShape: Layer {
    /// Every element's value.
    public let value: Double
    /// The elements' type.
    public let elementType: ElementType
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(_ value: Double = 0, elementType: ElementType = .float32, name: String? = nil) {
        self.value = value
        self.elementType = elementType
        self.name = name
    }

    /// `constantofshape`.
    public var namePrefix: String { "constantofshape" }
    /// An int64 vector.
    public var acceptsTypedInputs: Bool { true }

    /// The axes from the input's known value.
    func axes(_ values: [TensorValue?]) throws -> [Int] {
        guard let shape = values[0] else {
            throw AnvilError(.invalidShape, "its input (the axes) must be known when the plan is built: a constant or a shape computation")
        }
        guard shape.shape.rank == 2 || shape.count == 0 else { throw AnvilError(.invalidShape, "its input must be a vector of axes, got \(shape.shape)") }
        let axes = try shape.intElements("its axes")
        guard axes.allSatisfy({ $0 >= 0 }), axes.count < Shape.maximumRank else {
            throw AnvilError(.invalidShape, "axes \(axes) must be at most \(Shape.maximumRank - 1), none negative")
        }
        guard let count = Shape(unchecked: axes).checkedCount, count <= 1 << 28 else {
            throw AnvilError(.invalidShape, "axes \(axes) hold too many elements")
        }
        return axes
    }

    /// The shape its input holds.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        throw AnvilError(.invalidShape, "its shape follows from its input's value")
    }

    /// The shape its input holds.
    public func outputShape(for inputs: [Shape], values: [TensorValue?]) throws -> Shape {
        Shape(unchecked: try axes(values), elementType: elementType)
    }

    /// The filled tensor.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        let shape = Shape(unchecked: try axes(values), elementType: elementType)
        let count = shape.count
        if elementType.isInteger {
            guard let integer = Int64(exactly: value) else { throw AnvilError(.invalidOption, "value \(value) is not an integer") }
            return try TensorValue(shape: shape, integers: [Int64](repeating: integer, count: count))
        }
        return try TensorValue(shape: shape, floats: [Float](repeating: Float(value), count: count))
    }

    /// Never runs: its value is known when the plan is built.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        throw AnvilError(.internalError, "ConstantOfShape runs when the plan is built, never at predict")
    }
}

extension ConstantOfShape: ModelFileCodable {
    /// `ConstantOfShape`.
    static var fileTypeName: String { "ConstantOfShape" }

    /// Reads `value` (0) and `type` (`"float32"`).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(try fields.double("value", default: 0), elementType: try fields.elementType("elementType", default: .float32),
                  name: name)
    }

    /// `value` and `elementType`.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("value", .double(value)), ("elementType", .string(elementType.rawValue))]
    }
}
