/// The matrix product of two computed tensors (ONNX `MatMul` of two activations, PyTorch's
/// `q @ k.transpose(-2, -1)`): the last two axes of each input are a matrix, the axes before
/// them (after the batch axis) broadcast as NumPy's do, and each batch item multiplies its own
/// matrices. `transposeA` / `transposeB` read an input's matrices transposed, so an exporter's
/// `Transpose` of the last two axes costs no copy. A product by a weight matrix is ``Dense``.
///
/// ```swift
/// let scores = [queries, keys] --> MatMul(transposeB: true)   // [T, d] · [T, d]ᵀ → [T, T]
/// ```
public final class MatMul: Layer {
    /// Whether the first input's matrices are read transposed.
    public let transposeA: Bool
    /// Whether the second input's matrices are read transposed.
    public let transposeB: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(transposeA: Bool = false, transposeB: Bool = false, name: String? = nil) {
        self.transposeA = transposeA
        self.transposeB = transposeB
        self.name = name
    }

    /// `matmul`.
    public var namePrefix: String { "matmul" }
    /// The two factors.
    public var inputCountRange: ClosedRange<Int> { 2 ... 2 }

    /// The broadcast leading axes and the product's rows and columns.
    func resolve(_ inputs: [Shape]) throws -> (leading: [Int], rows: Int, columns: Int) {
        let a = inputs[0].dimensions, b = inputs[1].dimensions
        guard a.count >= 2, b.count >= 2 else {
            throw AnvilError(.invalidShape, "needs matrices (two axes after the batch axis) in both inputs, got \(inputs[0]) and \(inputs[1])")
        }
        let (rows, depthA) = transposeA ? (a[a.count - 1], a[a.count - 2]) : (a[a.count - 2], a[a.count - 1])
        let (depthB, columns) = transposeB ? (b[b.count - 1], b[b.count - 2]) : (b[b.count - 2], b[b.count - 1])
        guard depthA == depthB else {
            throw AnvilError(.invalidShape, "cannot multiply \(inputs[0]) by \(inputs[1]): \(depthA) columns against \(depthB) rows")
        }
        let la = Array(a.dropLast(2)), lb = Array(b.dropLast(2))
        let rank = max(la.count, lb.count)
        let x = [Int](repeating: 1, count: rank - la.count) + la, y = [Int](repeating: 1, count: rank - lb.count) + lb
        let leading = try zip(x, y).map { p, q -> Int in
            guard p == q || p == 1 || q == 1 else {
                throw AnvilError(.invalidShape, "cannot broadcast the leading axes of \(inputs[0]) and \(inputs[1]): each must be equal or 1")
            }
            return p == 1 ? q : p
        }
        return (leading, rows, columns)
    }

    /// The leading axes, then the product's rows and columns.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let (leading, rows, columns) = try resolve(inputs)
        return try Shape(dimensions: leading + [rows, columns])
    }

    /// A GEMM per matrix.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let (leading, _, _) = try resolve(context.inputShapes)
        return BatchedMatMulKernel(a: context.inputShapes[0].dimensions, b: context.inputShapes[1].dimensions,
                                   leading: leading, transposeA: transposeA, transposeB: transposeB)
    }
}

extension MatMul: ModelFileCodable {
    /// `MatMul`.
    static var fileTypeName: String { "MatMul" }

    /// Reads `transposeA` and `transposeB` (false).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(transposeA: try fields.bool("transposeA", default: false), transposeB: try fields.bool("transposeB", default: false), name: name)
    }

    /// `transposeA` and `transposeB`.
    func encodeFields() throws -> [(String, JSONValue)] { [("transposeA", .bool(transposeA)), ("transposeB", .bool(transposeB))] }
}
