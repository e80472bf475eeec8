/// Max pooling. Pairs are `(height, width)`; the stride defaults to the kernel size.
///
/// `.same` pads like TensorFlow/ONNX (padded cells never win), unlike Forge's `.same`,
/// which clamps windows at the edge.
public final class MaxPooling: Layer {
    /// Window size.
    public let kernel: (height: Int, width: Int)
    /// Step between windows.
    public let stride: (height: Int, width: Int)
    /// Border handling.
    public let padding: Padding
    /// Spacing between window cells.
    public let dilation: (height: Int, width: Int)
    /// Round the output size up instead of down (ONNX/PyTorch `ceil_mode`).
    public let ceilMode: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates a max-pooling layer.
    public init(kernel: (Int, Int), stride: (Int, Int)? = nil, padding: Padding = .valid,
                dilation: (Int, Int) = (1, 1), ceilMode: Bool = false, name: String? = nil) {
        self.kernel = kernel
        self.stride = stride ?? kernel
        self.padding = padding
        self.dilation = dilation
        self.ceilMode = ceilMode
        self.name = name
    }

    /// `maxpool`.
    public var namePrefix: String { "maxpool" }

    /// Height and width from the window geometry; same channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let g = try poolingGeometry(inputs[0], kernel: kernel, stride: stride, dilation: dilation,
                                    padding: padding, ceilMode: ceilMode)
        return Shape(height: g.outputHeight, width: g.outputWidth, channels: inputs[0].channels)
    }

    /// The pooling kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        let g = try poolingGeometry(input, kernel: kernel, stride: stride, dilation: dilation, padding: padding, ceilMode: ceilMode)
        return PoolingKernel(geometry: g, channels: input.channels, mode: .max)
    }
}

/// Pooling geometry; rejects pads as large as the window, which would leave windows with no input cell.
func poolingGeometry(_ input: Shape, kernel: (Int, Int), stride: (Int, Int), dilation: (Int, Int),
                     padding: Padding, ceilMode: Bool) throws -> WindowGeometry {
    let g = try WindowGeometry(input: input, kernel: kernel, stride: stride, dilation: dilation,
                               padding: padding, ceilMode: ceilMode)
    if case .explicit = padding {
        guard max(g.padTop, g.padBottom) < g.effectiveKernelHeight, max(g.padLeft, g.padRight) < g.effectiveKernelWidth else {
            throw AnvilError(.invalidOption, "padding \(padding) must be smaller than the window \(kernel.0)x\(kernel.1)")
        }
    }
    return g
}
