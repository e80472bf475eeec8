/// Average pooling. Pairs are `(height, width)`; the stride defaults to the kernel size.
///
/// Padded cells are excluded from the average (TensorFlow, ONNX `count_include_pad=0`)
/// unless `countIncludesPadding` is set.
public final class AveragePooling: Layer {
    /// The window: size, stride, padding, dilation and rounding.
    public let window: PoolingWindow
    /// Window size.
    public var kernel: (height: Int, width: Int) { window.kernel }
    /// Step between windows.
    public var stride: (height: Int, width: Int) { window.stride }
    /// Border handling.
    public var padding: Padding { window.padding }
    /// Spacing between window cells.
    public var dilation: (height: Int, width: Int) { window.dilation }
    /// Round the output size up instead of down.
    public var ceilMode: Bool { window.ceilMode }
    /// Divide by the whole window (pads included) instead of the cells inside the input.
    public let countIncludesPadding: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates an average-pooling layer.
    public convenience init(kernel: (Int, Int), stride: (Int, Int)? = nil, padding: Padding = .valid,
                dilation: (Int, Int) = (1, 1), ceilMode: Bool = false, countIncludesPadding: Bool = false,
                name: String? = nil) {
        self.init(window: PoolingWindow(kernel: kernel, stride: stride, padding: padding, dilation: dilation,
                                        ceilMode: ceilMode),
                  countIncludesPadding: countIncludesPadding, name: name)
    }

    /// Creates an average-pooling layer over `window`.
    public init(window: PoolingWindow, countIncludesPadding: Bool = false, name: String? = nil) {
        self.window = window
        self.countIncludesPadding = countIncludesPadding
        self.name = name
    }

    /// `avgpool`.
    public var namePrefix: String { "avgpool" }

    /// Height and width from the window geometry; same channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape { try window.outputShape(for: inputs[0]) }

    /// The pooling kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return PoolingKernel(geometry: try window.geometry(over: input).absorbing(context.absorbedPad), channels: input.channels,
                             mode: .average(countsPadding: countIncludesPadding))
    }
}

extension AveragePooling: PadAbsorbingLayer {
    /// The window over `input` when the average counts padding cells (zeros in the padding then
    /// weigh as zeros in the input do) and does not round up (its last window's count would
    /// depend on where the padding ends).
    func absorbableWindow(over input: Shape) -> WindowGeometry? {
        countIncludesPadding && !ceilMode ? try? window.geometry(over: input) : nil
    }
}

extension AveragePooling: ModelFileCodable {
    /// `AveragePooling`.
    static var fileTypeName: String { "AveragePooling" }

    /// Reads the window options (``PoolingWindow``) and `countIncludesPadding` (false).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(window: try PoolingWindow(fields: fields),
                  countIncludesPadding: try fields.bool("countIncludesPadding", default: false), name: name)
    }

    /// The window options, then `countIncludesPadding`.
    func encodeFields() throws -> [(String, JSONValue)] {
        window.encodedFields + [("countIncludesPadding", .bool(countIncludesPadding))]
    }
}
