/// Takes every `step`-th index in `start ..< end` along one axis (ONNX `Slice` on one axis,
/// `x[:, a:b:s]`). Axes count the batch axis as 0 (which cannot be sliced); negative indices
/// count from the end and are clamped as in ONNX; a negative `step` walks backwards (then
/// `end` may be `Int.min` to run to the first index).
public final class Slice: LayoutLayer {
    /// The axis to slice (negative counts from the end).
    public let axis: Int
    /// The first index taken.
    public let start: Int
    /// The index the slice stops before (`Int.max`: to the end).
    public let end: Int
    /// The step between taken indices (not 0).
    public let step: Int
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(axis: Int, start: Int = 0, end: Int = Int.max, step: Int = 1, name: String? = nil) {
        self.axis = axis
        self.start = start
        self.end = end
        self.step = step
        self.name = name
    }

    /// `slice`.
    public var namePrefix: String { "slice" }

    /// The resolved axis, first index and count on `input`.
    func resolve(_ input: Shape) throws -> (axis: Int, first: Int, count: Int) {
        let axis = try LayoutAxes.resolve(self.axis, rank: input.rank)
        guard step != 0 else { throw AnvilError(.invalidOption, "step must not be 0") }
        let extent = input.dimensions[axis - 1]
        func wrap(_ index: Int) -> Int { index < 0 ? (index == Int.min ? Int.min : index + extent) : index }
        var first = wrap(start), last = wrap(end)
        if step > 0 {
            first = min(max(first, 0), extent)
            last = min(max(last, 0), extent)
        } else {
            first = min(max(first, 0), extent - 1)
            last = min(max(last, -1), extent - 1)
        }
        // Both ends are clamped to [-1, extent], so the span cannot overflow; the division is
        // written so that a huge step cannot either.
        let span = step > 0 ? last - first : first - last
        let magnitude = step == Int.min ? Int.max : abs(step)
        let count = span > 0 ? (span - 1) / magnitude + 1 : 0
        guard count > 0 else {
            throw AnvilError(.invalidShape, "slice \(start)..<\(end) step \(step) of axis \(axis) (extent \(extent)) is empty")
        }
        return (axis, first, count)
    }

    /// The channels `first ..< first + count` the slice takes from `input` when it takes a run of
    /// them (the last axis, step 1, or a single channel); `nil` otherwise or if it cannot resolve.
    func channelWindow(of input: Shape) -> (first: Int, count: Int)? {
        guard let (axis, first, count) = try? resolve(input), axis == input.rank - 1, step == 1 || count == 1 else { return nil }
        return (first, count)
    }

    /// The input with the sliced axis shortened.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let (axis, _, count) = try resolve(inputs[0])
        var dims = inputs[0].dimensions
        dims[axis - 1] = count
        return try Shape(dimensions: dims, elementType: inputs[0].elementType)
    }

    /// Any element type: the values only move.
    public var acceptsTypedInputs: Bool { true }

    /// The known inputs' elements moved, when every input is known.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        try movedValue(for: inputs, values: values)
    }

    /// The copy of the taken indices.
    func copies(for inputs: [Shape], output: Shape) throws -> [StridedCopy]? {
        let input = inputs[0]
        let (axis, first, count) = try resolve(input)
        let inStrides = StridedCopy.contiguousStrides(input.dimensions)
        var copyStrides = inStrides
        copyStrides[axis - 1] *= count == 1 ? 1 : step  // |step| < extent when two or more are taken
        let outDims = output.dimensions
        return [StridedCopy(input: 0, dims: outDims, inputStrides: copyStrides,
                            outputStrides: StridedCopy.contiguousStrides(outDims), inputOffset: first * inStrides[axis - 1])]
    }

    /// A strided copy.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return StridedCopyKernel(copies: try copies(for: [input], output: context.outputShape)!, inputCounts: [input.count],
                                 outputCount: context.outputShape.count)
    }
}

extension Slice: ModelFileCodable {
    /// `Slice`.
    static var fileTypeName: String { "Slice" }

    /// Reads `axis` (required), `start` (0), `end` (to the end) and `step` (1).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(axis: try fields.int("axis"), start: try fields.int("start", default: 0),
                  end: try fields.int("end", default: Int.max), step: try fields.int("step", default: 1), name: name)
    }

    /// Every option; an `end` of `Int.max` is written as such.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("axis", .int(axis)), ("start", .int(start)), ("end", .int(end)), ("step", .int(step))]
    }
}
