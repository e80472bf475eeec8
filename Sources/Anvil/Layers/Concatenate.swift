/// Joins tensors along one axis: `[a, b, c] --> Concatenate()` along the channels (Inception
/// branches), `Concatenate(axis: 1)` along the height of images or the length of sequences.
/// Axes count the batch axis as 0 (which cannot be joined); the default, `-1`, is the channels.
/// The inputs have one rank and agree on every other axis. One input is passed through unchanged
/// (`torch.cat` of a one-element list). Along the channels, a following BatchNormalization and
/// activation are applied as the channels are joined (DenseNet's concatenation → norm → relu),
/// and a following ``ChannelShuffle`` by writing each channel where it moves it (ShuffleNet).
public final class Concatenate: LayoutLayer, FusableLayer {
    /// The axis to join along (negative counts from the end; `-1`, the channels, by default).
    public let axis: Int
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(axis: Int = -1, name: String? = nil) {
        self.axis = axis
        self.name = name
    }

    /// None of its own: a following one may be fused.
    var activation: ActivationFunction { .none }
    /// A following BatchNormalization and activation (taken along the channels only; the
    /// compiler applies them after the other kernels).
    var absorbs: FusionCapabilities { [.batchNormalization, .activation] }

    /// Whether the layer joins the channels (the last axis) of tensors of rank `rank`.
    func joinsChannels(rank: Int) -> Bool { (try? LayoutAxes.resolve(axis, rank: rank)) == rank - 1 }

    /// `concat`.
    public var namePrefix: String { "concat" }
    /// One or more.
    public var inputCountRange: ClosedRange<Int> { 1...Int.max }

    /// The inputs' common shape with the joined axis summed.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let rank = inputs[0].rank
        let axis = try LayoutAxes.resolve(self.axis, rank: rank)
        let mismatch = { AnvilError(.invalidShape, "cannot concatenate tensors of shapes \(inputs.map(\.description).joined(separator: " and ")) along axis \(axis)") }
        var dims = inputs[0].dimensions
        for shape in inputs.dropFirst() {
            guard shape.rank == rank, shape.elementType == inputs[0].elementType else { throw mismatch() }
            let other = shape.dimensions
            for k in dims.indices where k != axis - 1 && other[k] != dims[k] { throw mismatch() }
            let (total, overflow) = dims[axis - 1].addingReportingOverflow(other[axis - 1])
            if overflow { throw AnvilError(.invalidShape, "concatenated axis \(axis) overflows") }
            dims[axis - 1] = total
        }
        return try Shape(dimensions: dims, elementType: inputs[0].elementType)
    }

    /// A copy for one input; the channel kernel along the channels (with the fused normalization,
    /// activation and channel shuffle, reading folded slices in place); strided copies otherwise.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel { try makeFusedKernel(context).kernel }

    /// The kernel of ``makeKernel(_:)``; only the channel kernel applies a folded BatchNormalization.
    func makeFusedKernel(_ context: KernelContext) throws -> FusedKernel {
        let shapes = context.inputShapes, output = context.outputShape
        let axis = try LayoutAxes.resolve(self.axis, rank: output.rank)
        let alongChannels = joinsChannels(rank: output.rank)
        guard context.foldedSliceWindows.isEmpty || (shapes.count > 1 && alongChannels) else {
            throw AnvilError(.internalError, "slices folded into a concatenation that does not join channels")
        }
        if shapes.count == 1 {
            return FusedKernel(CopyKernel(shape: output, channelsFirst: false, activation: .none), appliesFoldedAffine: false)
        }
        if alongChannels {
            var affine = context.foldedAffine
            if let groups = context.fusedShuffleGroups, let (scale, shift) = affine {
                // The kernel applies the norm to the shuffled output: move each channel's pair with it.
                var movedScale = scale, movedShift = shift
                for channel in scale.indices {
                    let to = ChannelShuffle.destination(of: channel, channels: scale.count, groups: groups)
                    movedScale[to] = scale[channel]
                    movedShift[to] = shift[channel]
                }
                affine = (movedScale, movedShift)
            }
            let kernel = ConcatenateKernel(
                channels: shapes.map(\.channels), pixelsPerImage: output.height * output.width,
                affine: affine.map { (scale: ParameterData($0.scale), shift: ParameterData($0.shift)) },
                activation: context.fusedActivation ?? .none, shuffleGroups: context.fusedShuffleGroups,
                windows: shapes.indices.map { context.foldedSliceWindows[$0] ?? (0, shapes[$0].channels) })
            return FusedKernel(kernel, appliesFoldedAffine: true)
        }
        let copies = StridedCopyKernel(copies: try copies(for: shapes, output: output)!, inputCounts: shapes.map(\.count),
                                       outputCount: output.count)
        return FusedKernel(copies, appliesFoldedAffine: false)
    }

    /// Any element type: the values only move.
    public var acceptsTypedInputs: Bool { true }

    /// The known inputs' elements moved, when every input is known.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        try movedValue(for: inputs, values: values)
    }

    /// One copy per input, into its window of the joined axis.
    func copies(for inputs: [Shape], output: Shape) throws -> [StridedCopy]? {
        let axis = try LayoutAxes.resolve(self.axis, rank: output.rank)
        let outStrides = StridedCopy.contiguousStrides(output.dimensions)
        var offset = 0
        return inputs.enumerated().map { index, shape in
            defer { offset += shape.dimensions[axis - 1] }
            return StridedCopy(input: index, dims: shape.dimensions, inputStrides: StridedCopy.contiguousStrides(shape.dimensions),
                               outputStrides: outStrides, outputOffset: offset * outStrides[axis - 1])
        }
    }
}

extension Concatenate: ModelFileCodable {
    /// `Concatenate`.
    static var fileTypeName: String { "Concatenate" }

    /// Reads `axis` (`-1`, the channels).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(axis: try fields.int("axis", default: -1), name: name)
    }

    /// `axis`.
    func encodeFields() throws -> [(String, JSONValue)] { [("axis", .int(axis))] }
}
