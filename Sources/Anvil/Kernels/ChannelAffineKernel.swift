import CAnvilKernels

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

    /// The body of the C kernel (``InstructionSet/current`` when built); tests force each one.
    var instructionSet = InstructionSet.current

    /// About this many floats (16 KB) per chunk: the affine map writes a chunk and the activation
    /// rereads it while it is in L1. Over a whole thread's range the second pass read it back from
    /// L3 or memory (measured on DenseNet-121's norm → relu, before those moved into its
    /// concatenations: 9–14 GB/s).
    static let chunkFloats = 4_096

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * pixelsPerImage, costPerItem: channels, KernelRange(kernel: self, io: io))
    }

    /// Rows (pixels) in `range`.
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let input = io.inputs[0]
        let scale = self.scale.buffer, shift = self.shift.buffer
        if prelu {
            for row in range {
                let source = input + row * channels
                let out = io.output + row * channels
                for c in 0 ..< channels { let x = source[c]; out[c] = x > 0 ? x : scale[c] * x }
            }
            return
        }
        let isa = instructionSet.cValue
        let step = max(1, Self.chunkFloats / max(1, channels))
        var start = range.lowerBound
        while start < range.upperBound {
            let end = min(range.upperBound, start + step)
            anvil_scale_shift_pixels(isa, input, scale.baseAddress!, shift.baseAddress!, io.output, Int32(channels), start, end)
            activation.apply(io.output + start * channels, count: (end - start) * channels, instructionSet: instructionSet)
            start = end
        }
    }
}
