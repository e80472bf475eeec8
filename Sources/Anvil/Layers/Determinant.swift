/// The determinant of each square matrix held in the last two axes (ONNX `Det`): an input of
/// `[..., M, M]` after the batch gives `[...]`, one value per matrix (a matrix per item gives a
/// scalar per item). Each determinant is an LU factorisation with partial pivoting in float64,
/// rounded to float32 once at the end.
///
/// ```swift
/// let d = x --> Determinant()   // x: [3, 4, 4] per item → [3]
/// ```
public final class Determinant: Layer {
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(name: String? = nil) {
        self.name = name
    }

    /// `det`.
    public var namePrefix: String { "det" }

    /// The input's axes without its last two; an error unless they are a square matrix.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let dims = inputs[0].dimensions
        guard dims.count >= 2 else {
            throw AnvilError(.invalidShape, "a determinant needs matrices in the last two axes after the batch, got \(dims)")
        }
        guard dims[dims.count - 1] == dims[dims.count - 2] else {
            throw AnvilError(.invalidShape, "a determinant needs square matrices, got \(dims[dims.count - 2]) × \(dims[dims.count - 1]) in \(dims)")
        }
        return try Shape(dimensions: Array(dims.dropLast(2)))
    }

    /// M³/3 multiply-adds per matrix (the LU factorisation).
    public func macs(for inputs: [Shape], output: Shape) -> Int {
        let m = inputs[0].channels
        return saturatingProduct(output.count, m, m, max(m, 1)) / 3
    }

    /// The LU kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        DeterminantKernel(order: context.inputShapes[0].channels, matrices: context.outputShape.count)
    }
}

extension Determinant: ModelFileCodable {
    /// `Determinant`.
    static var fileTypeName: String { "Determinant" }

    /// No options.
    convenience init(fields: JSONFields, name: String) throws {
        self.init(name: name)
    }

    /// No options.
    func encodeFields() throws -> [(String, JSONValue)] { [] }
}
