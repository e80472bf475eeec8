/// Adds two or more tensors of the same shape (residual connections): `[x, y] --> Add()`.
public final class Add: Layer {
    /// The activation applied to the sum (ResNet applies ReLU after the addition).
    public let activation: ActivationFunction
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(activation: ActivationFunction = .none, name: String? = nil) {
        self.activation = activation
        self.name = name
    }

    /// `add`.
    public var namePrefix: String { "add" }
    /// Two or more.
    public var inputCountRange: ClosedRange<Int> { 2...Int.max }

    /// The common shape; throws if the inputs differ.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        for shape in inputs.dropFirst() where shape != inputs[0] {
            throw AnvilError(.invalidShape, "cannot add tensors of shapes \(inputs.map(\.description).joined(separator: " and "))")
        }
        return inputs[0]
    }

    /// The element-wise kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        IntegerResultKernel.bringing(AddKernel(count: context.outputShape.count, activation: activation), to: context.outputShape.elementType)
    }
    /// Integers too (the sum wraps to their type).
    public var acceptsTypedInputs: Bool { true }
}

extension Add: ModelFileCodable {
    /// `Add`.
    static var fileTypeName: String { "Add" }

    /// Reads `activation` (`"none"`).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(activation: try fields.activation("activation", default: .none), name: name)
    }

    /// `activation`.
    func encodeFields() throws -> [(String, JSONValue)] { [("activation", .activation(activation))] }
}
