/// Broadcasts its input to a larger shape (ONNX `Expand`, PyTorch `expand`): the output's axes
/// are the NumPy broadcast of the input's and the target's, the axes after the batch axis, so
/// an axis of extent 1 is repeated and a target of fewer axes leaves the leading ones as
/// they are. The target is the second input, an integer vector known when the plan is built
/// (a constant or a shape computation).
///
/// ```swift
/// let grid = [column, Constant.tensor(.int64([4, 4]))] --> Expand()   // [1, 4] → [4, 4]
/// ```
public final class Expand: LayoutLayer {
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(name: String? = nil) { self.name = name }

    /// `expand`.
    public var namePrefix: String { "expand" }
    /// The tensor and its target axes.
    public var inputCountRange: ClosedRange<Int> { 2 ... 2 }
    /// Any element type: the values are copied.
    public var acceptsTypedInputs: Bool { true }

    /// Needs its target's value.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        throw AnvilError(.invalidShape, "its shape follows from its target's value (input 2)")
    }

    /// The broadcast of the input's axes and the target's.
    public func outputShape(for inputs: [Shape], values: [TensorValue?]) throws -> Shape {
        guard let target = values[1] else {
            throw AnvilError(.invalidShape, "its target shape (input 2) must be known when the plan is built: a constant or a shape computation, not a tensor computed at predict")
        }
        guard target.shape.rank <= 2 else {
            throw AnvilError(.invalidShape, "its target shape (input 2) must be a vector, got \(target.shape)")
        }
        let wanted = try target.intElements("the target shape")
        guard wanted.allSatisfy({ $0 >= 0 }) else {
            throw AnvilError(.invalidShape, "target shape \(wanted) has a negative axis")
        }
        let dims = inputs[0].dimensions
        let rank = max(dims.count, wanted.count)
        let a = [Int](repeating: 1, count: rank - dims.count) + dims
        let b = [Int](repeating: 1, count: rank - wanted.count) + wanted
        let result = try zip(a, b).map { x, y -> Int in
            guard x == y || x == 1 || y == 1 else {
                throw AnvilError(.invalidShape, "cannot expand \(inputs[0]) to \(wanted): each axis must be equal or 1")
            }
            return x == 1 ? y : x
        }
        return try Shape(dimensions: result, elementType: inputs[0].elementType)
    }

    /// The copy reading each input element once per output position it broadcasts to.
    func copies(for inputs: [Shape], output: Shape) throws -> [StridedCopy]? {
        let dims = inputs[0].dimensions, outDims = output.dimensions
        let aligned = [Int](repeating: 1, count: outDims.count - dims.count) + dims
        let strides = StridedCopy.contiguousStrides(aligned)
        let inputStrides = aligned.indices.map { aligned[$0] == 1 ? 0 : strides[$0] }
        return [StridedCopy(input: 0, dims: outDims, inputStrides: inputStrides, outputStrides: StridedCopy.contiguousStrides(outDims))]
    }

    /// The broadcast of a known input.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        try movedValue(for: inputs, values: values)
    }

    /// A strided copy whose broadcast axes step 0 through the input.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let copies = try copies(for: context.inputShapes, output: context.outputShape)!
        return StridedCopyKernel(copies: copies, inputCounts: [context.inputShapes[0].count], outputCount: context.outputShape.count)
    }
}

extension Expand: ModelFileCodable {
    /// `Expand`.
    static var fileTypeName: String { "Expand" }

    /// No options.
    convenience init(fields: JSONFields, name: String) throws { self.init(name: name) }

    /// No options.
    func encodeFields() throws -> [(String, JSONValue)] { [] }
}
