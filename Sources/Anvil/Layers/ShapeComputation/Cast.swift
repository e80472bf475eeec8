/// Converts elements to another type (ONNX `Cast`): on a known value (a shape computation) it
/// is evaluated when the plan is built — floats truncate toward zero to integers, anything
/// non-zero is `true`; on a tensor computed at `predict` only float32 to float32 (the identity).
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

    /// A copy (float32 to float32).
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        CopyKernel(shape: context.inputShapes[0], channelsFirst: false, activation: .none)
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
