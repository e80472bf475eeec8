/// Takes the entries at `indices` along one axis (ONNX `Gather`, NumPy `take`): the output
/// has the input's axes with `axis` replaced by the indices' axes. Axes count the batch axis
/// as 0, which cannot be gathered. The indices are the second input, an integer tensor known
/// when the plan is built (a constant or a shape computation; negative ones count from the end).
///
/// On a tensor computed at `predict` it is a strided copy per index; on a known value (a shape
/// vector) it is evaluated when the plan is built.
///
/// ```swift
/// let height = [image --> ShapeOf(), zero] --> Gather(axis: 1)   // the image's height
/// ```
public final class Gather: Layer {
    /// The axis gathered (negative counts from the end).
    public let axis: Int
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(axis: Int, name: String? = nil) {
        self.axis = axis
        self.name = name
    }

    /// `gather`.
    public var namePrefix: String { "gather" }
    /// The data and the indices.
    public var inputCountRange: ClosedRange<Int> { 2 ... 2 }
    /// Data of any element type; integer indices.
    public var acceptsTypedInputs: Bool { true }

    /// The resolved axis and the indices (each in range) for `data` and the known `indices`.
    func resolve(_ inputs: [Shape], _ values: [TensorValue?]) throws -> (axis: Int, indices: [Int], shape: Shape) {
        let data = inputs[0]
        let axis = try LayoutAxes.resolve(self.axis, rank: data.rank)
        guard let indices = values[1] else {
            throw AnvilError(.invalidShape, "its indices (input 2) must be known when the plan is built: a constant or a shape computation")
        }
        let extent = data.dimensions[axis - 1]
        let resolved = try indices.intElements("its indices").map { index in
            let wrapped = index < 0 ? index + extent : index
            guard wrapped >= 0, wrapped < extent else {
                throw AnvilError(.invalidShape, "index \(index) is out of range for axis \(axis) of extent \(extent)")
            }
            return wrapped
        }
        var dims = data.dimensions
        dims.replaceSubrange(axis - 1 ... axis - 1, with: indices.shape.dimensions)
        let shape = try Shape(dimensions: dims, elementType: data.elementType)
        return (axis, resolved, shape)
    }

    /// The input's axes with `axis` replaced by the indices'.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        throw AnvilError(.invalidShape, "its shape follows from its indices' value")
    }

    /// The input's axes with `axis` replaced by the indices'.
    public func outputShape(for inputs: [Shape], values: [TensorValue?]) throws -> Shape {
        try resolve(inputs, values).shape
    }

    /// One copy per index: the slab at that index along the axis into its place in the output.
    func copies(_ inputs: [Shape], _ values: [TensorValue?]) throws -> [StridedCopy] {
        let (axis, indices, output) = try resolve(inputs, values)
        guard output.count > 0 else { return [] }
        let dims = inputs[0].dimensions
        let inStrides = StridedCopy.contiguousStrides(dims)
        let outer = Array(dims[..<(axis - 1)]), inner = Array(dims[axis...])
        let innerCount = inner.reduce(1, *)
        let outStrides = StridedCopy.contiguousStrides(outer + [indices.count] + inner)
        return indices.enumerated().map { position, index in
            StridedCopy(input: 0, dims: outer + [innerCount], inputStrides: Array(inStrides[..<(axis - 1)]) + [1],
                        outputStrides: Array(outStrides[..<(axis - 1)]) + [1], inputOffset: index * inStrides[axis - 1],
                        outputOffset: position * outStrides[axis - 1])
        }
    }

    /// The gathered entries of a known input.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        guard let data = values[0] else { return nil }
        let output = try outputShape(for: inputs, values: values)
        return try TensorValue.moving([data], by: try copies(inputs, values), into: output)
    }

    /// A strided copy per index.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let shapes = context.inputShapes
        return StridedCopyKernel(copies: try copies(shapes, context.inputValues), inputCounts: shapes.map(\.count),
                                 outputCount: context.outputShape.count)
    }
}

extension Gather: ModelFileCodable {
    /// `Gather`.
    static var fileTypeName: String { "Gather" }

    /// Reads `axis` (required).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(axis: try fields.int("axis"), name: name)
    }

    /// `axis`.
    func encodeFields() throws -> [(String, JSONValue)] { [("axis", .int(axis))] }
}
