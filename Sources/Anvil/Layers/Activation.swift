/// Applies an activation function element-wise: `--> Activation(.relu)`.
///
/// Right after a convolution or dense layer that has no activation of its own, it is
/// fused into that layer's kernel at compile time.
public final class Activation: Layer {
    /// The function.
    public let function: ActivationFunction
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(_ function: ActivationFunction, name: String? = nil) {
        self.function = function
        self.name = name
    }

    /// `activation`.
    public var namePrefix: String { "activation" }

    /// The input shape.
    public func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0] }
    /// Integers and truth values too (`Clip`, `Abs`, `Neg` of indices; `1 − x` of a mask).
    public var acceptsTypedInputs: Bool { true }

    /// An element-wise kernel (an integer result wrapped to its type).
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        IntegerResultKernel.bringing(CopyKernel(shape: context.inputShapes[0], channelsFirst: false, activation: function),
                                     to: context.outputShape.elementType)
    }
}

extension Activation: ModelFileCodable {
    /// `Activation`.
    static var fileTypeName: String { "Activation" }

    /// Reads `function` (required).
    convenience init(fields: JSONFields, name: String) throws {
        guard fields.has("function") else { throw AnvilError(.invalidFile, "\(fields.context): missing field 'function'") }
        self.init(try fields.activation("function", default: .none), name: name)
    }

    /// `function`.
    func encodeFields() throws -> [(String, JSONValue)] { [("function", .activation(function))] }
}
