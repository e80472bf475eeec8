/// Max pooling. Pairs are `(height, width)`; the stride defaults to the kernel size.
///
/// `.same` pads like TensorFlow/ONNX (padded cells never win), unlike Forge's `.same`,
/// which clamps windows at the edge.
public final class MaxPooling: Layer {
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
    /// Round the output size up instead of down (ONNX/PyTorch `ceil_mode`).
    public var ceilMode: Bool { window.ceilMode }
    /// The user's name for the layer.
    public let name: String?

    /// Creates a max-pooling layer.
    public convenience init(kernel: (Int, Int), stride: (Int, Int)? = nil, padding: Padding = .valid,
                dilation: (Int, Int) = (1, 1), ceilMode: Bool = false, name: String? = nil) {
        self.init(window: PoolingWindow(kernel: kernel, stride: stride, padding: padding, dilation: dilation,
                                        ceilMode: ceilMode), name: name)
    }

    /// Creates a max-pooling layer over `window`.
    public init(window: PoolingWindow, name: String? = nil) {
        self.window = window
        self.name = name
    }

    /// `maxpool`.
    public var namePrefix: String { "maxpool" }

    /// Height and width from the window geometry; same channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        try window.outputShape(for: inputs[0]).with(elementType: inputs[0].elementType)
    }
    /// Integers too (the maximum is one of them).
    public var acceptsTypedInputs: Bool { true }

    /// The pooling kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return PoolingKernel(geometry: try window.geometry(over: input), channels: input.channels, mode: .max)
    }
}

extension MaxPooling: ModelFileCodable {
    /// `MaxPooling`.
    static var fileTypeName: String { "MaxPooling" }

    /// Reads the window options (``PoolingWindow``).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(window: try PoolingWindow(fields: fields), name: name)
    }

    /// The window options.
    func encodeFields() throws -> [(String, JSONValue)] { window.encodedFields }
}
