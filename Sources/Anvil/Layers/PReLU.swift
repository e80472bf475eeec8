/// Parametric ReLU: `x` if positive, else `slope[c] · x`, with one learned slope per channel
/// (parameter kind ``ParameterKind/slopes``).
public final class PReLU: Layer {
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(name: String? = nil) { self.name = name }

    /// `prelu`.
    public var namePrefix: String { "prelu" }

    /// The input shape.
    public func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0] }

    /// One slope per channel.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] { [ParameterSpec(.slopes, count: inputs[0].channels)] }

    /// A per-channel kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return ChannelAffineKernel(channels: input.channels, pixelsPerImage: input.height * input.width,
                                   scale: try context.parameter(.slopes).values, shift: [], prelu: true)
    }
}

extension PReLU: ModelFileCodable {
    /// `PReLU`.
    static var fileTypeName: String { "PReLU" }

    /// No options.
    convenience init(fields: JSONFields, name: String) throws { self.init(name: name) }

    /// No options.
    func encodeFields() throws -> [(String, JSONValue)] { [] }
}
