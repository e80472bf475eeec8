/// How ``DepthToSpace`` and ``SpaceToDepth`` order a block's values among the channels (ONNX's
/// `mode`): with block size b and C' channels per block cell `(i, j)`,
public enum BlockOrder: String, Sendable, CaseIterable {
    /// depth-column-row: channel `(i·b + j)·C' + c` (ONNX's default, TensorFlow's order).
    case depthColumnRow = "DCR"
    /// column-row-depth: channel `c·b² + i·b + j` (PyTorch's `pixel_shuffle`).
    case columnRowDepth = "CRD"
}

/// The strided copy between a `H × W × (b²·C')` image and the `(H·b) × (W·b) × C'` one, over
/// the axes `(h, i, w, j, c)`: the strides of the depth side and of the space side.
enum BlockCopy {
    static func strides(height: Int, width: Int, depthChannels: Int, block b: Int, order: BlockOrder)
        -> (dims: [Int], depth: [Int], space: [Int]) {
        let c = depthChannels / (b * b), C = depthChannels
        let dims = [height, b, width, b, c]
        let depth = order == .depthColumnRow ? [width * C, b * c, C, c, 1] : [width * C, b, C, 1, b * b]
        let space = [b * width * b * c, width * b * c, b * c, c, 1]
        return (dims, depth, space)
    }

    static func read(_ fields: JSONFields) throws -> (Int, BlockOrder) {
        let mode = try fields.string("mode", default: "DCR")
        guard let order = BlockOrder(rawValue: mode) else {
            throw AnvilError(.invalidFile, "\(fields.context): field 'mode' must be \"DCR\" or \"CRD\"")
        }
        return (try fields.int("blockSize"), order)
    }
}

/// Moves blocks of channels into space (ONNX `DepthToSpace`, PyTorch `pixel_shuffle` with
/// `.columnRowDepth`): `H × W × (b²·C)` → `(H·b) × (W·b) × C`. Images only.
public final class DepthToSpace: Layer {
    /// The block size b.
    public let blockSize: Int
    /// The order of a block's values among the channels.
    public let mode: BlockOrder
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(blockSize: Int, mode: BlockOrder = .depthColumnRow, name: String? = nil) {
        self.blockSize = blockSize
        self.mode = mode
        self.name = name
    }

    /// `depthtospace`.
    public var namePrefix: String { "depthtospace" }

    /// `(H·b) × (W·b) × C/b²`.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0], b = blockSize
        guard b > 0 else { throw AnvilError(.invalidOption, "blockSize must be positive, got \(b)") }
        guard input.rank == 4 else { throw AnvilError(.invalidShape, "needs an image (rank 4), got rank \(input.rank)") }
        let (square, overflow) = b.multipliedReportingOverflow(by: b)
        guard !overflow, input.channels % square == 0 else {
            throw AnvilError(.invalidShape, "blockSize² \(overflow ? "(\(b)²)" : "\(square)") must divide channels \(input.channels)")
        }
        return Shape(height: try checkedProduct([input.height, b], what: "height"),
                     width: try checkedProduct([input.width, b], what: "width"), channels: input.channels / square)
    }

    /// A strided copy from the depth layout to the space one.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0]
        let s = BlockCopy.strides(height: input.height, width: input.width, depthChannels: input.channels,
                                  block: blockSize, order: mode)
        return StridedCopyKernel(copies: [StridedCopy(input: 0, dims: s.dims, inputStrides: s.depth, outputStrides: s.space)],
                                 inputCounts: [input.count], outputCount: input.count)
    }
}

extension DepthToSpace: ModelFileCodable {
    /// `DepthToSpace`.
    static var fileTypeName: String { "DepthToSpace" }

    /// Reads `blockSize` (required) and `mode` (`"DCR"`).
    convenience init(fields: JSONFields, name: String) throws {
        let (b, order) = try BlockCopy.read(fields)
        self.init(blockSize: b, mode: order, name: name)
    }

    /// `blockSize` and `mode`.
    func encodeFields() throws -> [(String, JSONValue)] { [("blockSize", .int(blockSize)), ("mode", .string(mode.rawValue))] }
}

/// Moves blocks of space into channels (ONNX `SpaceToDepth`, which is `.depthColumnRow`; PyTorch
/// `pixel_unshuffle` is `.columnRowDepth`): `(H·b) × (W·b) × C` → `H × W × (b²·C)`. Images only.
public final class SpaceToDepth: Layer {
    /// The block size b.
    public let blockSize: Int
    /// The order of a block's values among the channels.
    public let mode: BlockOrder
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(blockSize: Int, mode: BlockOrder = .depthColumnRow, name: String? = nil) {
        self.blockSize = blockSize
        self.mode = mode
        self.name = name
    }

    /// `spacetodepth`.
    public var namePrefix: String { "spacetodepth" }

    /// `H/b × W/b × (b²·C)`.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0], b = blockSize
        guard b > 0 else { throw AnvilError(.invalidOption, "blockSize must be positive, got \(b)") }
        guard input.rank == 4 else { throw AnvilError(.invalidShape, "needs an image (rank 4), got rank \(input.rank)") }
        guard input.height % b == 0, input.width % b == 0 else {
            throw AnvilError(.invalidShape, "blockSize \(b) must divide height \(input.height) and width \(input.width)")
        }
        return Shape(height: input.height / b, width: input.width / b,
                     channels: try checkedProduct([input.channels, b, b], what: "channels"))
    }

    /// A strided copy from the space layout to the depth one.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let output = context.outputShape
        let s = BlockCopy.strides(height: output.height, width: output.width, depthChannels: output.channels,
                                  block: blockSize, order: mode)
        return StridedCopyKernel(copies: [StridedCopy(input: 0, dims: s.dims, inputStrides: s.space, outputStrides: s.depth)],
                                 inputCounts: [output.count], outputCount: output.count)
    }
}

extension SpaceToDepth: ModelFileCodable {
    /// `SpaceToDepth`.
    static var fileTypeName: String { "SpaceToDepth" }

    /// Reads `blockSize` (required) and `mode` (`"DCR"`).
    convenience init(fields: JSONFields, name: String) throws {
        let (b, order) = try BlockCopy.read(fields)
        self.init(blockSize: b, mode: order, name: name)
    }

    /// `blockSize` and `mode`.
    func encodeFields() throws -> [(String, JSONValue)] { [("blockSize", .int(blockSize)), ("mode", .string(mode.rawValue))] }
}
