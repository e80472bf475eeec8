/// The maximum of each channel over all pixels: `H × W × C → 1 × 1 × C`.
public final class GlobalMaxPooling: Layer {
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(name: String? = nil) { self.name = name }

    /// `gmp`.
    public var namePrefix: String { "gmp" }

    /// `1 × 1 × C`.
    public func outputShape(for inputs: [Shape]) throws -> Shape { Shape.vector(inputs[0].channels).with(elementType: inputs[0].elementType) }
    /// Integers and truth values too (the maximum is one of them).
    public var acceptsTypedInputs: Bool { true }

    /// The global pooling kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return GlobalPoolingKernel(pixels: input.height * input.width, channels: input.channels, average: false)
    }
}

extension GlobalMaxPooling: ModelFileCodable {
    /// `GlobalMaxPooling`.
    static var fileTypeName: String { "GlobalMaxPooling" }

    /// No options.
    convenience init(fields: JSONFields, name: String) throws { self.init(name: name) }

    /// No options.
    func encodeFields() throws -> [(String, JSONValue)] { [] }
}
