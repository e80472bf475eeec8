/// Weights and biases prepared for a kernel: borrowed from the parameter source when they are
/// already in the kernel's layout, copied otherwise. `weights` rows are output channels.
struct KernelWeights: Sendable {
    let weights: ParameterData
    let bias: ParameterData?

    var weightPointer: UnsafePointer<Float> { weights.buffer.baseAddress! }
    var biasPointer: UnsafePointer<Float>? { bias?.buffer.baseAddress }

    /// Builds the weights from raw parameters: `reordered` replaces the source when a layout
    /// change was needed; a folded affine map scales each output row and shifts its bias.
    init(source: ParameterData, reordered: [Float]?, bias: ParameterData?, outputs: Int,
         weightsPerOutput: Int, rowStride: Int? = nil, affine: (scale: [Float], shift: [Float])?) {
        guard let affine else {
            self.weights = reordered.map { ParameterData($0) } ?? source
            self.bias = bias.map(Self.copied)
            return
        }
        var values = reordered ?? source.values
        // Forge-layout rows are contiguous per output channel, except depthwise where the
        // output channel is the fastest index; `rowStride` says which.
        if let rowStride {
            for i in 0 ..< values.count { values[i] *= affine.scale[i % rowStride] }
        } else {
            for o in 0 ..< outputs {
                for k in 0 ..< weightsPerOutput { values[o * weightsPerOutput + k] *= affine.scale[o] }
            }
        }
        self.weights = ParameterData(values)
        self.bias = Self.foldedBias(bias, affine: affine, outputs: outputs)
    }

    /// The bias once a per-channel affine map `y = scale * y + shift` is folded in after the
    /// layer: `shift + scale * bias`; `bias` itself when there is no map (copied out of a
    /// mapped file, see `copied`).
    static func foldedBias(_ bias: ParameterData?, affine: (scale: [Float], shift: [Float])?, outputs: Int) -> ParameterData? {
        guard let affine else { return bias.map(copied) }
        var shifted = affine.shift
        if let bias { for o in 0 ..< outputs { shifted[o] += bias.buffer[o] * affine.scale[o] } }
        return ParameterData(shifted)
    }

    /// A bias in memory of its own. Read from a mapped file on every prediction, a bias keeps
    /// the file's pages around it resident, and the kernel may map those in 2 MiB folios that
    /// reach into the neighbouring weights the compile step released, keeping them resident.
    private static func copied(_ bias: ParameterData) -> ParameterData {
        bias.owner is MappedFile ? ParameterData(bias.values) : bias
    }
}
