/// Sums sliding blocks back into an image (ONNX `Col2Im`, PyTorch's `fold`; the inverse of
/// im2col): `columns --> Col2Im(imageSize: (5, 5), block: (2, 2))`.
///
/// The input is a sequence of `L` blocks, each `C·kh·kw` values (ONNX's `[N, C·kh·kw, L]` held
/// channels-last: block `l`'s values in ONNX's order, channel-major then row, then column of the
/// block); `L` must be the number of windows of size `block` (dilated, strided, padded as a
/// convolution's) that fit in `imageSize`, row-major. Every value is added into the image pixel
/// its block position covers; values falling in the padding are dropped. The output is
/// `H × W × C`.
public final class Col2Im: Layer {
    /// The image's height and width.
    public let imageSize: (height: Int, width: Int)
    /// A block's height and width.
    public let block: (height: Int, width: Int)
    /// Step between blocks.
    public let stride: (height: Int, width: Int)
    /// Spacing between a block's cells.
    public let dilation: (height: Int, width: Int)
    /// The padding around the image that blocks may cover.
    public let padding: Padding
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(imageSize: (Int, Int), block: (Int, Int), stride: (Int, Int) = (1, 1), dilation: (Int, Int) = (1, 1),
                padding: Padding = .valid, name: String? = nil) {
        self.imageSize = imageSize
        self.block = block
        self.stride = stride
        self.dilation = dilation
        self.padding = padding
        self.name = name
    }

    /// `col2im`.
    public var namePrefix: String { "col2im" }

    /// The blocks' windows over the image.
    func geometry(channels: Int) throws -> WindowGeometry {
        guard imageSize.height > 0, imageSize.width > 0 else {
            throw AnvilError(.invalidOption, "imageSize \(imageSize.height)x\(imageSize.width) must be positive")
        }
        let g = try WindowGeometry(input: Shape(height: imageSize.height, width: imageSize.width, channels: channels), kernel: block,
                                   stride: stride, dilation: dilation, padding: padding)
        guard g.outputHeight > 0, g.outputWidth > 0 else {
            throw AnvilError(.invalidOption, "block \(block.height)x\(block.width) does not fit the padded image \(imageSize.height)x\(imageSize.width)")
        }
        return g
    }

    /// `imageSize` with `C` channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0]
        guard input.rank == 3 else {
            throw AnvilError(.invalidShape, "reads a sequence of blocks L × (C·\(block.height)·\(block.width)), got \(input)")
        }
        guard block.height > 0, block.width > 0 else { throw AnvilError(.invalidOption, "block \(block.height)x\(block.width) must be positive") }
        let cells = try checkedProduct([block.height, block.width], what: "block")
        guard input.channels % cells == 0 else {
            throw AnvilError(.invalidShape, "block \(block.height)x\(block.width) must divide the \(input.channels) values of each block")
        }
        let g = try geometry(channels: input.channels / cells)
        guard input.width == g.outputHeight * g.outputWidth else {
            throw AnvilError(.invalidShape, "has \(input.width) blocks; \(g.outputHeight)x\(g.outputWidth) = \(g.outputHeight * g.outputWidth) fit the image \(imageSize.height)x\(imageSize.width)")
        }
        return Shape(height: imageSize.height, width: imageSize.width, channels: input.channels / cells)
    }

    /// The summing kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        Col2ImKernel(geometry: try geometry(channels: context.outputShape.channels), channels: context.outputShape.channels)
    }
}

extension Col2Im: ModelFileCodable {
    /// `Col2Im`.
    static var fileTypeName: String { "Col2Im" }

    /// Reads `imageSize` and `block` (required), `stride` and `dilation` ((1, 1)), `padding` (`"valid"`).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(imageSize: try fields.pair("imageSize"), block: try fields.pair("block"), stride: try fields.pair("stride", default: (1, 1)),
                  dilation: try fields.pair("dilation", default: (1, 1)), padding: try fields.padding("padding", default: .valid), name: name)
    }

    /// Every option.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("imageSize", .pair(imageSize)), ("block", .pair(block)), ("stride", .pair(stride)), ("dilation", .pair(dilation)),
         ("padding", .padding(padding))]
    }
}
