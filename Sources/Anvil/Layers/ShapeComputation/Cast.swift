/// Converts elements to another type (ONNX `Cast`): floats truncate toward zero to integers,
/// integers wrap to the type's width, anything non-zero is `true`. On a known value (a shape
/// computation) it is evaluated when the plan is built; on a tensor computed at `predict` a
/// cast that changes no element (to float32, or to a wider integer type) only renames the
/// tensor's type and costs nothing (the plan gives it its input's buffer), any other converts
/// each element.
public final class Cast: Layer {
    /// The type converted to.
    public let elementType: ElementType
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(to elementType: ElementType, name: String? = nil) {
        self.elementType = elementType
        self.name = name
    }

    /// `cast`.
    public var namePrefix: String { "cast" }
    /// Any element type.
    public var acceptsTypedInputs: Bool { true }

    /// The input's axes with the new type.
    public func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0].with(elementType: elementType) }

    /// The converted value, when the input is known.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        try values[0]?.converted(to: elementType)
    }

    /// Whether casting a tensor of `input` changes none of its elements (``ElementType/holdsEvery(_:)``).
    func onlyRenames(_ input: ElementType) -> Bool { elementType.holdsEvery(input) }

    /// A conversion of each element (a copy where no element changes, for a plan that runs it).
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        if onlyRenames(input.elementType) { return CopyKernel(shape: input, channelsFirst: false, activation: .none) }
        return ConversionKernel(type: elementType, count: input.count)
    }
}

extension Cast: ModelFileCodable {
    /// `Cast`.
    static var fileTypeName: String { "Cast" }

    /// Reads `to` (required: an element type).
    convenience init(fields: JSONFields, name: String) throws {
        _ = try fields.string("to")  // required
        self.init(to: try fields.elementType("to", default: .float32), name: name)
    }

    /// `to`.
    func encodeFields() throws -> [(String, JSONValue)] { [("to", .string(elementType.rawValue))] }
}
