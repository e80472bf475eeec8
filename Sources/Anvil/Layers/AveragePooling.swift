/// Average pooling. Pairs are `(height, width)`; the stride defaults to the kernel size.
///
/// Padded cells are excluded from the average (TensorFlow, ONNX `count_include_pad=0`)
/// unless `countIncludesPadding` is set.
public final class AveragePooling: Layer {
    /// Window size.
    public let kernel: (height: Int, width: Int)
    /// Step between windows.
    public let stride: (height: Int, width: Int)
    /// Border handling.
    public let padding: Padding
    /// Spacing between window cells.
    public let dilation: (height: Int, width: Int)
    /// Round the output size up instead of down.
    public let ceilMode: Bool
    /// Divide by the whole window (pads included) instead of the cells inside the input.
    public let countIncludesPadding: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates an average-pooling layer.
    public init(kernel: (Int, Int), stride: (Int, Int)? = nil, padding: Padding = .valid,
                dilation: (Int, Int) = (1, 1), ceilMode: Bool = false, countIncludesPadding: Bool = false,
                name: String? = nil) {
        self.kernel = kernel
        self.stride = stride ?? kernel
        self.padding = padding
        self.dilation = dilation
        self.ceilMode = ceilMode
        self.countIncludesPadding = countIncludesPadding
        self.name = name
    }

    /// `avgpool`.
    public var namePrefix: String { "avgpool" }

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
        return PoolingKernel(geometry: g, channels: input.channels, mode: .average(countsPadding: countIncludesPadding))
    }
}
