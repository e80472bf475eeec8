import CAnvilKernels

/// A 2-D transposed convolution (ONNX ConvTranspose, PyTorch `ConvTranspose2d`, Keras
/// `Conv2DTranspose`): each input pixel scatters its kernel-weighted values onto the output, so
/// a stride of 2 doubles height and width (decoders, segmentation heads, upsampling).
///
/// ```swift
/// input --> TransposedConvolution(kernel: (4, 4), channels: 64, stride: (2, 2), padding: .explicit(1))
/// ```
///
/// Output size per axis: `(in − 1)·stride − padBefore − padAfter + (k − 1)·dilation + 1 + outputPadding`
/// with explicit pads (`.valid` is no pads); `.same` gives `in · stride`, the total pad
/// `(in − 1)·stride + (k − 1)·dilation + 1 + outputPadding − in · stride` split with the smaller
/// half at the top/left (TensorFlow's `conv2d_transpose` SAME). Weights hold
/// `channels × kh × kw × (inputChannels / groups)` values in the `.forge` layout (as
/// `Convolution`); `.pytorch` is ConvTranspose's `[in][out / groups][kh][kw]`; `.tensorflow` is
/// Keras' `[kh][kw][out / groups][in]`.
public final class TransposedConvolution: Layer, FusableLayer {
    /// Kernel size.
    public let kernel: (height: Int, width: Int)
    /// Output channels.
    public let channels: Int
    /// Step between the input pixels' positions on the output (the upsampling factor).
    public let stride: (height: Int, width: Int)
    /// Rows and columns cropped from the full output (explicit pads), none (`.valid`), or `.same`.
    public let padding: Padding
    /// Rows and columns added at the bottom and right of the output (ONNX `output_padding`);
    /// each must be smaller than the stride or the dilation on its axis.
    public let outputPadding: (height: Int, width: Int)
    /// Spacing between kernel taps.
    public let dilation: (height: Int, width: Int)
    /// Channel groups: input and output channels split into this many independent convolutions.
    public let groups: Int
    /// Whether the layer adds a bias per output channel.
    public let useBias: Bool
    /// The activation applied to the output.
    public let activation: ActivationFunction
    /// The user's name for the layer.
    public let name: String?

    /// Creates a transposed convolution.
    public init(kernel: (Int, Int), channels: Int, stride: (Int, Int) = (1, 1), padding: Padding = .valid,
                outputPadding: (Int, Int) = (0, 0), dilation: (Int, Int) = (1, 1), groups: Int = 1,
                useBias: Bool = true, activation: ActivationFunction = .none, name: String? = nil) {
        self.kernel = kernel
        self.channels = channels
        self.stride = stride
        self.padding = padding
        self.outputPadding = outputPadding
        self.dilation = dilation
        self.groups = groups
        self.useBias = useBias
        self.activation = activation
        self.name = name
    }

    /// `deconv`.
    public var namePrefix: String { "deconv" }

    /// The resolved geometry: pads cropped at the top/left and the output size.
    struct Geometry {
        var padTop: Int, padLeft: Int, outputHeight: Int, outputWidth: Int
    }

    func geometry(_ input: Shape) throws -> Geometry {
        guard channels > 0 else { throw AnvilError(.invalidOption, "channels must be positive, got \(channels)") }
        guard groups > 0 else { throw AnvilError(.invalidOption, "groups must be positive, got \(groups)") }
        guard input.channels % groups == 0, channels % groups == 0 else {
            throw AnvilError(.invalidShape, "groups \(groups) must divide input channels \(input.channels) and output channels \(channels)")
        }
        guard kernel.0 > 0, kernel.1 > 0, kernel.0 < 1 << 16, kernel.1 < 1 << 16 else {
            throw AnvilError(.invalidOption, "kernel \(kernel.0)x\(kernel.1) must be positive and below 65536")
        }
        guard stride.0 > 0, stride.1 > 0, stride.0 < 1 << 16, stride.1 < 1 << 16 else {
            throw AnvilError(.invalidOption, "stride \(stride.0)x\(stride.1) must be positive and below 65536")
        }
        guard dilation.0 > 0, dilation.1 > 0, dilation.0 < 1 << 16, dilation.1 < 1 << 16 else {
            throw AnvilError(.invalidOption, "dilation \(dilation.0)x\(dilation.1) must be positive and below 65536")
        }
        guard outputPadding.0 >= 0, outputPadding.1 >= 0,
              outputPadding.0 < max(stride.0, dilation.0), outputPadding.1 < max(stride.1, dilation.1) else {
            throw AnvilError(.invalidOption, "outputPadding \(outputPadding.0)x\(outputPadding.1) must be at least 0 and smaller than the stride or the dilation")
        }
        let fullHeight = (input.height - 1) * stride.0 + (kernel.0 - 1) * dilation.0 + 1 + outputPadding.0
        let fullWidth = (input.width - 1) * stride.1 + (kernel.1 - 1) * dilation.1 + 1 + outputPadding.1
        var g: Geometry
        switch padding {
        case .valid:
            g = Geometry(padTop: 0, padLeft: 0, outputHeight: fullHeight, outputWidth: fullWidth)
        case .same:
            let height = input.height * stride.0, width = input.width * stride.1
            g = Geometry(padTop: max(fullHeight - height, 0) / 2, padLeft: max(fullWidth - width, 0) / 2,
                         outputHeight: height, outputWidth: width)
        case .explicit(let top, let left, let bottom, let right):
            guard top >= 0, left >= 0, bottom >= 0, right >= 0 else {
                throw AnvilError(.invalidOption, "padding \(padding) must not be negative")
            }
            g = Geometry(padTop: top, padLeft: left, outputHeight: fullHeight - top - bottom,
                         outputWidth: fullWidth - left - right)
        }
        guard g.outputHeight > 0, g.outputWidth > 0 else {
            throw AnvilError(.invalidShape, "padding \(padding) leaves no output (\(g.outputHeight)x\(g.outputWidth)) for input \(input.height)x\(input.width)")
        }
        _ = try checkedProduct([g.outputHeight, g.outputWidth, channels], what: "output")
        return g
    }

    /// Height and width from the stride, kernel, pads and output padding; `channels` channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let g = try geometry(inputs[0])
        _ = try checkedProduct([channels, kernel.0, kernel.1, inputs[0].channels / groups], what: "weight tensor")
        _ = try checkedProduct([inputs[0].height, inputs[0].width, kernel.0, kernel.1, channels], what: "column buffer")
        return try inputs[0].windowOutput(height: g.outputHeight, width: g.outputWidth, channels: channels)
    }

    /// Weights and (if `useBias`) biases.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        let weights = ParameterSpec(.weights, count: channels * kernel.0 * kernel.1 * (inputs[0].channels / groups))
        return useBias ? [weights, ParameterSpec(.biases, count: channels)] : [weights]
    }

    /// Input pixels × taps × output channels × input channels per group.
    public func macs(for inputs: [Shape], output: Shape) -> Int {
        saturatingProduct(inputs[0].height, inputs[0].width, kernel.0, kernel.1, channels, inputs[0].channels / groups)
    }

    /// A following BatchNormalization (folded into the weights) and activation; a residual
    /// `Add` is applied by the compiler after the kernel.
    var absorbs: FusionCapabilities { .all }

    /// GEMM of the input by every tap's weights (OpenBLAS), then a col2im gather in C.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel { try makeFusedKernel(context).kernel }

    /// The kernel of ``makeKernel(_:)``, with a folded BatchNormalization in its weights and bias.
    func makeFusedKernel(_ context: KernelContext) throws -> FusedKernel {
        let input = context.inputShapes[0]
        let g = try geometry(input)
        let raw = try context.parameter(.weights)
        let bias = useBias ? try context.parameter(.biases) : nil
        var packed = WeightReorder.transposedConvolution(raw.buffer, layout: context.layout, outputs: channels,
                                                         kernelHeight: kernel.0, kernelWidth: kernel.1,
                                                         inputs: input.channels, groups: groups)
        var biasValues = bias.map { Array($0.buffer) }
        if let affine = context.foldedAffine {
            let perGroup = channels / groups, inputsPerGroup = input.channels / groups
            for index in 0 ..< packed.count {
                // Packed as [group][ky][kx][output in group][input in group].
                let row = index / inputsPerGroup
                let o = (row / (perGroup * kernel.0 * kernel.1)) * perGroup + row % perGroup
                packed[index] *= affine.scale[o]
            }
            biasValues = (0 ..< channels).map { o in affine.shift[o] + (biasValues?[o] ?? 0) * affine.scale[o] }
        }
        let shape = anvil_col2im_shape(
            input_height: Int32(input.height), input_width: Int32(input.width), groups: Int32(groups),
            group_channels: Int32(channels / groups), kernel_height: Int32(kernel.0), kernel_width: Int32(kernel.1),
            stride_height: Int32(stride.0), stride_width: Int32(stride.1),
            dilation_height: Int32(dilation.0), dilation_width: Int32(dilation.1),
            pad_top: Int32(g.padTop), pad_left: Int32(g.padLeft),
            output_height: Int32(g.outputHeight), output_width: Int32(g.outputWidth))
        let kernel = TransposedConvolutionKernel(shape: shape, inputChannels: input.channels, weights: packed,
                                                 bias: biasValues, activation: context.fusedActivation ?? activation)
        return FusedKernel(kernel, appliesFoldedAffine: true)
    }
}

extension TransposedConvolution: ModelFileCodable {
    /// `TransposedConvolution`.
    static var fileTypeName: String { "TransposedConvolution" }

    /// Reads `kernel` and `channels` (required), `stride`, `padding` (`"valid"`), `outputPadding`,
    /// `dilation`, `groups`, `bias` and `activation`.
    convenience init(fields: JSONFields, name: String) throws {
        self.init(kernel: try fields.pair("kernel"), channels: try fields.int("channels"),
                  stride: try fields.pair("stride", default: (1, 1)),
                  padding: try fields.padding("padding", default: .valid),
                  outputPadding: try fields.pair("outputPadding", default: (0, 0)),
                  dilation: try fields.pair("dilation", default: (1, 1)), groups: try fields.int("groups", default: 1),
                  useBias: try fields.bool("bias", default: true),
                  activation: try fields.activation("activation", default: .none), name: name)
    }

    /// Every option, defaults included.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("kernel", .pair(kernel)), ("channels", .int(channels)), ("stride", .pair(stride)),
         ("padding", .padding(padding)), ("outputPadding", .pair(outputPadding)), ("dilation", .pair(dilation)),
         ("groups", .int(groups)), ("bias", .bool(useBias)), ("activation", .activation(activation))]
    }
}
