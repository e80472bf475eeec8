/// Softmax over the channels of each pixel (for a classifier: over the classes).
public final class Softmax: Layer {
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(name: String? = nil) { self.name = name }

    /// `softmax`.
    public var namePrefix: String { "softmax" }

    /// The input shape.
    public func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0] }

    /// The softmax kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return SoftmaxKernel(channels: input.channels, pixelsPerImage: input.height * input.width, logarithm: false)
    }
}

extension Softmax: ModelFileCodable {
    /// `Softmax`.
    static var fileTypeName: String { "Softmax" }

    /// No options.
    convenience init(fields: JSONFields, name: String) throws { self.init(name: name) }

    /// No options.
    func encodeFields() throws -> [(String, JSONValue)] { [] }
}
