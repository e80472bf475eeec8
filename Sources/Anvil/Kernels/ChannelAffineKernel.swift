/// `y = scale[c] * x + shift[c]` per channel (a BatchNormalization that could not be folded),
/// then `activation` (a following Activation fused in: DenseNet's norm → relu on each
/// concatenation, one pass instead of two); or PReLU `y = x > 0 ? x : slope[c] * x` when
/// `prelu` is set.
struct ChannelAffineKernel: RangeKernel, EpilogueReportingKernel {
    let channels: Int
    let pixelsPerImage: Int
    let scale: ParameterData
    let shift: ParameterData
    let prelu: Bool
    let activation: ActivationFunction

    /// The activation applied after the affine map (`.none` for PReLU).
    var appliedActivation: ActivationFunction { activation }
    /// It takes no residual.
    var addsResidual: Bool { false }

    init(channels: Int, pixelsPerImage: Int, scale: [Float], shift: [Float], prelu: Bool,
         activation: ActivationFunction = .none) {
        precondition(!prelu || activation == .none, "PReLU is its own activation")
        self.channels = channels
        self.pixelsPerImage = pixelsPerImage
        self.scale = ParameterData(scale)
        self.shift = ParameterData(shift)
        self.prelu = prelu
        self.activation = activation
    }

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * pixelsPerImage, costPerItem: channels, KernelRange(kernel: self, io: io))
    }

    /// Rows (pixels) in `range`.
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let input = io.inputs[0]
        let scale = self.scale.buffer, shift = self.shift.buffer
        for row in range {
            let source = input + row * channels
            let out = io.output + row * channels
            if prelu {
                for c in 0 ..< channels { let x = source[c]; out[c] = x > 0 ? x : scale[c] * x }
            } else {
                for c in 0 ..< channels { out[c] = scale[c] * source[c] + shift[c] }
            }
        }
        // While the range's rows are still in cache.
        activation.apply(io.output + range.lowerBound * channels, count: range.count * channels)
    }
}
