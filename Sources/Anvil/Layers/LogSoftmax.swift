/// Log-softmax over the channels of each pixel: `x − max − log Σ e^(x − max)`.
public final class LogSoftmax: Layer {
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(name: String? = nil) { self.name = name }

    /// `logsoftmax`.
    public var namePrefix: String { "logsoftmax" }

    /// The input shape.
    public func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0] }

    /// The log-softmax kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return SoftmaxKernel(channels: input.channels, pixelsPerImage: input.height * input.width, logarithm: true)
    }
}

extension LogSoftmax: ModelFileCodable {
    /// `LogSoftmax`.
    static var fileTypeName: String { "LogSoftmax" }

    /// No options.
    convenience init(fields: JSONFields, name: String) throws { self.init(name: name) }

    /// No options.
    func encodeFields() throws -> [(String, JSONValue)] { [] }
}
