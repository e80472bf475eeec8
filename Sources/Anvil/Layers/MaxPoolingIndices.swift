/// Where each window's maximum of a ``MaxPooling`` layer lies (ONNX `MaxPool`'s second output,
/// `Indices`; PyTorch's `return_indices`): `x --> MaxPoolingIndices(window: w)` beside
/// `x --> MaxPooling(window: w)`.
///
/// Each output value is the flat position of its window's maximum in the whole batch as ONNX
/// holds it, `N × C × H × W`: `((n·C + c)·H + h)·W + w`, or with `columnMajor` (ONNX
/// `storage_order` 1) `(n·C + c)·H·W + w·H + h`. The first maximum in row-major window order
/// wins; padded cells never do. The positions are int64 values held as float32, exact while
/// the batch holds at most 2²⁴ values (see ``ElementType/exactIntegerLimit``).
public final class MaxPoolingIndices: Layer {
    /// The window: size, stride, padding, dilation and rounding (the pooling's own).
    public let window: PoolingWindow
    /// Whether positions count within an image column by column (ONNX `storage_order` 1).
    public let columnMajor: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(window: PoolingWindow, columnMajor: Bool = false, name: String? = nil) {
        self.window = window
        self.columnMajor = columnMajor
        self.name = name
    }

    /// `maxpoolindices`.
    public var namePrefix: String { "maxpoolindices" }
    /// Integers are searched too.
    public var acceptsTypedInputs: Bool { true }

    /// The pooling's output size, int64.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0]
        guard input.rank == 4 || input.rank == 3 else { throw AnvilError(.invalidShape, "pools an image H × W × C, got \(input)") }
        guard Int64(input.count) <= ElementType.exactIntegerLimit else {
            throw AnvilError(.invalidShape, "an image of \(input.count) values has positions beyond \(ElementType.exactIntegerLimit), which float32 cannot hold exactly")
        }
        return try window.outputShape(for: input).with(elementType: .int64)
    }

    /// The search kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        MaxPoolingIndicesKernel(geometry: try window.geometry(over: context.inputShapes[0]), channels: context.inputShapes[0].channels,
                                columnMajor: columnMajor)
    }
}

extension MaxPoolingIndices: ModelFileCodable {
    /// `MaxPoolingIndices`.
    static var fileTypeName: String { "MaxPoolingIndices" }

    /// Reads the window options (``PoolingWindow``) and `columnMajor` (false).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(window: try PoolingWindow(fields: fields), columnMajor: try fields.bool("columnMajor", default: false), name: name)
    }

    /// The window options and `columnMajor`.
    func encodeFields() throws -> [(String, JSONValue)] { window.encodedFields + [("columnMajor", .bool(columnMajor))] }
}
