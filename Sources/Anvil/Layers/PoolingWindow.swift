/// The window options shared by ``MaxPooling`` and ``AveragePooling``: its size, step,
/// border handling, dilation and rounding. Pairs are `(height, width)`.
public struct PoolingWindow: Sendable {
    /// Window size.
    public let kernel: (height: Int, width: Int)
    /// Step between windows (defaults to the window size).
    public let stride: (height: Int, width: Int)
    /// Border handling.
    public let padding: Padding
    /// Spacing between window cells.
    public let dilation: (height: Int, width: Int)
    /// Round the output size up instead of down (ONNX/PyTorch `ceil_mode`).
    public let ceilMode: Bool

    /// Creates the options; the stride defaults to the window size.
    public init(kernel: (Int, Int), stride: (Int, Int)? = nil, padding: Padding = .valid,
                dilation: (Int, Int) = (1, 1), ceilMode: Bool = false) {
        self.kernel = kernel
        self.stride = stride ?? kernel
        self.padding = padding
        self.dilation = dilation
        self.ceilMode = ceilMode
    }

    /// The window over `input`; rejects pads as large as the window, which would leave
    /// windows with no input cell.
    func geometry(over input: Shape) throws -> WindowGeometry {
        let g = try WindowGeometry(input: input, kernel: kernel, stride: stride, dilation: dilation,
                                   padding: padding, ceilMode: ceilMode)
        if case .explicit = padding {
            guard max(g.padTop, g.padBottom) < g.effectiveKernelHeight, max(g.padLeft, g.padRight) < g.effectiveKernelWidth else {
                throw AnvilError(.invalidOption, "padding \(padding) must be smaller than the window \(kernel.0)x\(kernel.1)")
            }
        }
        return g
    }

    /// The output shape for `input`: the window's height and width, the same channels.
    func outputShape(for input: Shape) throws -> Shape {
        let g = try geometry(over: input)
        return try input.windowOutput(height: g.outputHeight, width: g.outputWidth, channels: input.channels)
    }
}

extension PoolingWindow {
    /// Reads `kernel` (required), `stride` (= kernel), `padding` (`"valid"`), `dilation` and `ceilMode`.
    init(fields: JSONFields) throws {
        let kernel = try fields.pair("kernel")
        self.init(kernel: kernel, stride: try fields.pair("stride", default: kernel),
                  padding: try fields.padding("padding", default: .valid),
                  dilation: try fields.pair("dilation", default: (1, 1)),
                  ceilMode: try fields.bool("ceilMode", default: false))
    }

    /// The options as model-file members.
    var encodedFields: [(String, JSONValue)] {
        [("kernel", .pair(kernel)), ("stride", .pair(stride)), ("padding", .padding(padding)),
         ("dilation", .pair(dilation)), ("ceilMode", .bool(ceilMode))]
    }
}
