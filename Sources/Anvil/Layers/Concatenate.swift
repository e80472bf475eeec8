/// Joins two or more tensors along channels (Inception branches): `[a, b, c] --> Concatenate()`.
public final class Concatenate: Layer {
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(name: String? = nil) { self.name = name }

    /// `concat`.
    public var namePrefix: String { "concat" }
    /// Two or more.
    public var inputCountRange: ClosedRange<Int> { 2...Int.max }

    /// Same height and width; channels summed. Throws if the spatial sizes differ.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        for shape in inputs.dropFirst() where shape.height != inputs[0].height || shape.width != inputs[0].width {
            throw AnvilError(.invalidShape, "cannot concatenate tensors of different spatial sizes \(inputs.map(\.description).joined(separator: " and "))")
        }
        let channels = try inputs.reduce(0) { sum, shape in
            let (total, overflow) = sum.addingReportingOverflow(shape.channels)
            if overflow { throw AnvilError(.invalidShape, "concatenated channels overflow") }
            return total
        }
        return Shape(height: inputs[0].height, width: inputs[0].width, channels: channels)
    }

    /// The concatenation kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        ConcatenateKernel(channels: context.inputShapes.map(\.channels),
                          pixelsPerImage: context.outputShape.height * context.outputShape.width)
    }
}

extension Concatenate: ModelFileCodable {
    /// `Concatenate`.
    static var fileTypeName: String { "Concatenate" }

    /// No options.
    convenience init(fields: JSONFields, name: String) throws { self.init(name: name) }

    /// No options.
    func encodeFields() throws -> [(String, JSONValue)] { [] }
}
