/// Where the batch sits when exporters fold it into another axis: `[T, B·heads, d]` in
/// `nn.MultiheadAttention`, `[B·windows, tokens, C]` in Swin, `[T·B, D]` before a projection.
/// At batch size B, ONNX axis `axis` has extent outer·B·inner; each item's own tensor (what the
/// engine holds after its batch axis) has outer·inner there.
struct BatchFold: Equatable {
    /// The ONNX axis holding the batch.
    var axis: Int
    /// The extent of that axis's part inside the batch factor (1: the batch is its innermost part).
    var inner: Int
    /// Whether the graph is converted as one item (``ONNXConverter/isUnbatched``): each batch item
    /// is a whole evaluation of the graph, so an operation along this axis stays within the item.
    var wholeItem = false
}

/// A computed tensor (the Python converter's `Act`): its Anvil name, its Anvil shape (the axes
/// after the batch axis, channels last: (h, w, c) an image, (l, c) a sequence, (n) a vector,
/// () rank 1) and `permutation`, which Anvil axis holds each ONNX axis.
///
/// ONNX's view is the graph at batch size 1, so each item's tensor is exactly it. Converted as
/// is, ONNX axis 0 is the batch (Anvil axis 0) and a tensor has the standard permutation (NCHW
/// held as NHWC: 0, 3, 1, 2); after an ONNX Transpose it may hold any other, with no data moved,
/// the batch included (`[B, T, D] → [T, B, D]`: ONNX axis 1 is then Anvil axis 0). A Reshape can
/// fold the batch into another axis (``BatchFold``): no ONNX axis is Anvil's batch axis then, and
/// Anvil's rank is ONNX's plus one.
struct ComputedTensor {
    /// The Anvil layer or input name.
    var name: String
    /// Anvil's extents after the batch axis; `nil`: open (depends on an open input size).
    var shape: [Int?]
    /// Which Anvil axis holds ONNX axis i.
    var permutation: [Int]
    /// The rank of the Anvil tensor when it differs from ONNX's (a global pooling gives a vector
    /// of C where ONNX keeps [N, C, 1, 1]).
    var anvilRank: Int
    /// The batch folded into an ONNX axis; `nil` when an ONNX axis of extent 1 is the batch.
    var batchFold: BatchFold?
    /// Whether this stands for the output of a node that could not be converted (never written).
    var isPlaceholder = false

    /// A tensor in the standard layout unless `permutation` says otherwise.
    init(_ name: String, _ shape: [Int?], permutation: [Int]? = nil, anvilRank: Int? = nil, batchFold: BatchFold? = nil) {
        self.name = name
        self.shape = shape
        self.permutation = permutation ?? Self.standardPermutation(shape.count + 1)
        self.anvilRank = anvilRank ?? shape.count + 1
        self.batchFold = batchFold
    }

    /// The ONNX axis that is the batch (extent 1 in ONNX's view); `nil` when it is folded.
    var batchAxis: Int? { batchFold == nil ? permutation.firstIndex(of: 0) : nil }
    /// Whether the batch is ONNX's first axis, as every graph input has it.
    var isBatchFirst: Bool { batchFold == nil && permutation.first == 0 }
    /// ONNX's rank (Anvil's, counting its batch axis, is `rank`; they differ when the batch is folded).
    var onnxRank: Int { permutation.count }
    /// The Anvil axis for each ONNX axis that holds the values in ONNX's row-major order, the
    /// batch where it is.
    var onnxOrder: [Int] {
        if batchFold != nil { return (0 ..< onnxRank).map { $0 + 1 } }
        let batch = batchAxis ?? 0
        return (0 ..< onnxRank).map { $0 < batch ? $0 + 1 : $0 == batch ? 0 : $0 }
    }
    /// How many values of an item sit inside the batch factor in ONNX's row-major order at
    /// batch size B (the batch axis's stride); `nil` when a size is open.
    var batchStride: Int? {
        let onnx = onnxShape
        let axis = batchFold?.axis ?? batchAxis ?? 0
        guard !onnx[(axis + 1)...].contains(where: { $0 == nil }) else { return nil }
        return onnx[(axis + 1)...].reduce(batchFold?.inner ?? 1) { $0 * $1! }
    }
    /// Whether ONNX axis `axis` holds the batch (as itself or folded into it).
    func holdsBatch(_ axis: Int) -> Bool {
        let axis = ((axis % onnxRank) + onnxRank) % onnxRank
        return batchFold.map { !$0.wholeItem && $0.axis == axis } ?? (permutation[axis] == 0)
    }

    /// Where ONNX's axes sit in Anvil's channels-last layout for a tensor converted as is.
    static func standardPermutation(_ rank: Int) -> [Int] {
        switch rank {
        case 4: return [0, 3, 1, 2]
        case 3: return [0, 2, 1]
        default: return Array(0 ..< rank)
        }
    }

    /// The rank counting the batch axis.
    var rank: Int { shape.count + 1 }
    /// Whether a dimension depends on an open input size.
    var isOpen: Bool { shape.contains { $0 == nil } }
    /// Whether ONNX's axes sit where converting as is puts them.
    var isStandard: Bool { permutation == Self.standardPermutation(rank) }
    /// Whether the tensor is an NCHW image held as NHWC.
    var isSpatial: Bool { shape.count == 3 && isStandard }
    /// The Anvil shape with the batch axis (1).
    var fullShape: [Int?] { [1] + shape }
    /// The shape as ONNX sees it (batch 1).
    var onnxShape: [Int?] { permutation.map { fullShape[$0] } }
    /// Whether Anvil's memory holds the values in ONNX's row-major order (axes of extent 1 aside).
    var isONNXOrdered: Bool {
        let held = permutation.filter { fullShape[$0] != 1 }
        return held == held.sorted()
    }
    /// Whether ONNX axis `axis` is Anvil's channel axis (the last).
    func isChannelAxis(_ axis: Int) -> Bool {
        permutation[((axis % onnxRank) + onnxRank) % onnxRank] == rank - 1
    }
    /// The same shape and layout under another name (an element-wise layer's output).
    func like(_ name: String) -> ComputedTensor {
        ComputedTensor(name, shape, permutation: permutation, anvilRank: anvilRank, batchFold: batchFold)
    }
}

/// A tensor flattened to [N, everything] in ONNX's order, not yet written (the Python `Flat`):
/// Gemm/MatMul read an image directly (weights reordered); anything else writes a Flatten.
final class PendingFlatten {
    /// The tensor being flattened.
    let source: ComputedTensor
    /// The Flatten written for it, once one is.
    var written: ComputedTensor?

    /// A pending flatten of `source`.
    init(_ source: ComputedTensor) {
        self.source = source
    }

    /// (n): the flattened length, `nil` when the source's size is open.
    var shape: [Int?] {
        source.isOpen ? [nil] : [source.shape.reduce(1) { $0 * ($1 ?? 1) }]
    }
}

/// ShuffleNet's [N, g, k, H, W] view of an NCHW tensor (after the Transpose, [N, k, g, H, W]):
/// nothing is written until the Reshape back to [N, C, H, W] makes it a ChannelShuffle.
struct GroupedChannels {
    /// The NCHW tensor whose channels are split.
    let source: ComputedTensor
    /// The number of groups.
    let groups: Int
    /// Channels per group.
    let perGroup: Int
    /// Whether the two group axes were swapped by a Transpose.
    var swapped = false

    /// [1, g, k, H, W], or [1, k, g, H, W] once swapped.
    var onnxShape: [Int?] {
        let shape = source.onnxShape
        return [1] + (swapped ? [perGroup, groups] : [groups, perGroup]) + Array(shape[2...])
    }
}

/// What an ONNX tensor name stands for while converting.
enum ImportedValue {
    /// A computed tensor.
    case tensor(ComputedTensor)
    /// A pending flatten.
    case flat(PendingFlatten)
    /// A constant.
    case constant(ConstantTensor)
    /// ShuffleNet's grouped view.
    case grouped(GroupedChannels)
    /// A tensor of shape arithmetic on an open input size, computed when the plan is built.
    case planned(PlanTensor)
    /// A value no later node can be checked against (a failed node with no known shape).
    case blocked
}
