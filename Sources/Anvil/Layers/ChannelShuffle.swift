/// ShuffleNet's channel shuffle: with `groups` g and C = g·k channels, output channel `i·g + j`
/// is input channel `j·k + i` (ONNX's `Reshape [N, g, k, H, W] → Transpose(0, 2, 1, 3, 4) →
/// Reshape [N, C, H, W]`, PyTorch's `nn.ChannelShuffle`). Any rank with a channel axis.
public final class ChannelShuffle: Layer {
    /// The number of groups the channels are split into.
    public let groups: Int
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(groups: Int, name: String? = nil) {
        self.groups = groups
        self.name = name
    }

    /// `shuffle`.
    public var namePrefix: String { "shuffle" }

    /// The input shape; `groups` must divide the channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        guard groups > 0 else { throw AnvilError(.invalidOption, "groups must be positive, got \(groups)") }
        guard inputs[0].rank >= 2 else { throw AnvilError(.invalidShape, "needs a channel axis (rank 2 to 4), got rank \(inputs[0].rank)") }
        guard inputs[0].channels % groups == 0 else {
            throw AnvilError(.invalidShape, "groups \(groups) must divide channels \(inputs[0].channels)")
        }
        return inputs[0]
    }

    /// Where the shuffle moves channel `channel` of `channels` with `groups` groups: with
    /// k = channels / groups, channel `j·k + i` goes to `i·groups + j`.
    static func destination(of channel: Int, channels: Int, groups: Int) -> Int {
        let k = channels / groups
        return (channel % k) * groups + channel / k
    }

    /// A strided copy per pixel: `[pixels, k, g]` gathered from `[pixels, g, k]`.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let shape = context.inputShapes[0]
        let c = shape.channels, k = c / groups
        let copy = StridedCopy(input: 0, dims: [shape.height * shape.width, k, groups],
                               inputStrides: [c, 1, k], outputStrides: [c, groups, 1])
        return StridedCopyKernel(copies: [copy], inputCounts: [shape.count], outputCount: shape.count)
    }
}

extension ChannelShuffle: ModelFileCodable {
    /// `ChannelShuffle`.
    static var fileTypeName: String { "ChannelShuffle" }

    /// Reads `groups` (required).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(groups: try fields.int("groups"), name: name)
    }

    /// `groups`.
    func encodeFields() throws -> [(String, JSONValue)] { [("groups", .int(groups))] }
}
