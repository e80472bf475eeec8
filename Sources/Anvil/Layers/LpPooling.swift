/// Lp pooling (ONNX `LpPool`, PyTorch `LPPool2d`): `(Σ |x|^p)^(1/p)` over each window; padded
/// cells count as 0. Pairs are `(height, width)`; the stride defaults to the kernel size.
///
/// ```swift
/// x --> LpPooling(p: 2, kernel: (3, 3), stride: (2, 2))
/// ```
///
/// Global Lp pooling (ONNX `GlobalLpPool`) is `LpPooling` with the whole image as its window.
public final class LpPooling: Layer {
    /// The exponent (1 and 2 run vectorised).
    public let p: Float
    /// The window: size, stride, padding, dilation and rounding.
    public let window: PoolingWindow
    /// The user's name for the layer.
    public let name: String?

    /// Creates an Lp pooling layer.
    public convenience init(p: Float = 2, kernel: (Int, Int), stride: (Int, Int)? = nil, padding: Padding = .valid,
                            dilation: (Int, Int) = (1, 1), ceilMode: Bool = false, name: String? = nil) {
        self.init(p: p, window: PoolingWindow(kernel: kernel, stride: stride, padding: padding, dilation: dilation,
                                              ceilMode: ceilMode), name: name)
    }

    /// Creates an Lp pooling layer over `window`.
    public init(p: Float = 2, window: PoolingWindow, name: String? = nil) {
        self.p = p
        self.window = window
        self.name = name
    }

    /// `lppool`.
    public var namePrefix: String { "lppool" }

    /// Height and width from the window geometry; same channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        guard p.isFinite, p > 0 else { throw AnvilError(.invalidOption, "p must be positive and finite, got \(p)") }
        return try window.outputShape(for: inputs[0])
    }

    /// The C kernel `anvil_lp_pool_lines`.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        return LpPoolingKernel(geometry: try window.geometry(over: input), channels: input.channels, p: p)
    }
}

extension LpPooling: ModelFileCodable {
    /// `LpPooling`.
    static var fileTypeName: String { "LpPooling" }

    /// Reads `p` (2) and the window options (``PoolingWindow``).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(p: try fields.float("p", default: 2), window: try PoolingWindow(fields: fields), name: name)
    }

    /// `p`, then the window options.
    func encodeFields() throws -> [(String, JSONValue)] { [("p", .number(p))] + window.encodedFields }
}
