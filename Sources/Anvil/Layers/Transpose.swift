/// Permutes the axes of a tensor (ONNX `Transpose`, PyTorch `permute`): output axis `i` is
/// input axis `permutation[i]`. Axes count the batch axis as 0, which must stay first; the
/// output keeps the rank. An image `[N, H, W, C]` with `permutation: [0, 3, 1, 2]` gives
/// `[N, C, H, W]`, which Anvil stores as an image of height C, width H and W channels.
public final class Transpose: LayoutLayer {
    /// Output axis `i` is input axis `permutation[i]` (batch axis included, first).
    public let permutation: [Int]
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(permutation: [Int], name: String? = nil) {
        self.permutation = permutation
        self.name = name
    }

    /// `transpose`.
    public var namePrefix: String { "transpose" }

    func checkPermutation(rank: Int) throws {
        guard permutation.count == rank, permutation.sorted() == Array(0 ..< rank) else {
            throw AnvilError(.invalidOption, "permutation \(permutation) is not a permutation of the \(rank) axes of a rank-\(rank) input")
        }
        guard permutation[0] == 0 else {
            throw AnvilError(.invalidOption, "permutation \(permutation) moves the batch axis; it must start with 0")
        }
    }

    /// The input's axes in the new order.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        try checkPermutation(rank: inputs[0].rank)
        let dims = inputs[0].dimensions
        return try Shape(dimensions: permutation.dropFirst().map { dims[$0 - 1] }, elementType: inputs[0].elementType)
    }

    /// The strided copy gathering each output axis from its input axis, on `input`.
    func gather(_ input: Shape) -> StridedCopy {
        let dims = input.dimensions, strides = StridedCopy.contiguousStrides(dims)
        let axes = permutation.dropFirst().map { $0 - 1 }
        let outDims = axes.map { dims[$0] }
        return StridedCopy(input: 0, dims: outDims, inputStrides: axes.map { strides[$0] },
                           outputStrides: StridedCopy.contiguousStrides(outDims))
    }

    /// For each output element (row-major), its position in the input of shape `input`: the
    /// input offsets ``gather(_:)`` visits, in order.
    func gatherOrder(input: Shape) -> [Int] {
        let copy = gather(input)
        var order = [Int](repeating: 0, count: input.count)
        var index = [Int](repeating: 0, count: copy.dims.count)
        for o in 0 ..< order.count {
            order[o] = zip(index, copy.inputStrides).reduce(0) { $0 + $1.0 * $1.1 }
            var k = copy.dims.count - 1
            while k >= 0 {
                index[k] += 1
                if index[k] < copy.dims[k] { break }
                index[k] = 0
                k -= 1
            }
        }
        return order
    }

    /// Any element type: the values only move.
    public var acceptsTypedInputs: Bool { true }

    /// The known inputs' elements moved, when every input is known.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        try movedValue(for: inputs, values: values)
    }

    /// The gather of each output axis from its input axis.
    func copies(for inputs: [Shape], output: Shape) throws -> [StridedCopy]? { [gather(inputs[0])] }

    /// A strided copy gathering each output axis from its input axis.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return StridedCopyKernel(copies: [gather(input)], inputCounts: [input.count], outputCount: input.count)
    }
}

extension Transpose: ModelFileCodable {
    /// `Transpose`.
    static var fileTypeName: String { "Transpose" }

    /// Reads `permutation` (required).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(permutation: try fields.intArray("permutation", counts: 1 ... Shape.maximumRank), name: name)
    }

    /// `permutation`.
    func encodeFields() throws -> [(String, JSONValue)] { [("permutation", .array(permutation.map { .int($0) }))] }
}
