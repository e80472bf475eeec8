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
    /// rereads it while it is in L1. Over a whole thread's range the second pass would read it
    /// back from L3 or memory.
    static let chunkFloats = 4_096

    /// Pixels of `channels` values in one chunk (at least 1).
    static func chunkPixels(channels: Int) -> Int { max(1, chunkFloats / max(1, channels)) }

    /// `output = activation(scale[c] · input + shift[c])` for `pixels` (indices over the batch),
    /// or only the activation without `affine`. `input` may be `output`: each value is read, then
    /// written at the same index. Call it a chunk at a time (``chunkPixels(channels:)``).
    static func apply(_ affine: (scale: ParameterData, shift: ParameterData)?, then activation: ActivationFunction,
                      input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, channels: Int,
                      pixels: Range<Int>, instructionSet: InstructionSet) {
        if let affine {
            anvil_scale_shift_pixels(instructionSet.cValue, input, affine.scale.buffer.baseAddress!,
                                     affine.shift.buffer.baseAddress!, output, Int32(channels), pixels.lowerBound,
                                     pixels.upperBound)
        }
        activation.apply(output + pixels.lowerBound * channels, count: pixels.count * channels, instructionSet: instructionSet)
    }

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * pixelsPerImage, costPerItem: channels, KernelRange(kernel: self, io: io))
    }

    /// Rows (pixels) in `range`.
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let input = io.inputs[0]
        if prelu {
            let scale = self.scale.buffer
            for row in range {
                let source = input + row * channels
                let out = io.output + row * channels
                for c in 0 ..< channels { let x = source[c]; out[c] = x > 0 ? x : scale[c] * x }
            }
            return
        }
        let step = Self.chunkPixels(channels: channels)
        for start in stride(from: range.lowerBound, to: range.upperBound, by: step) {
            Self.apply((scale, shift), then: activation, input: input, output: io.output, channels: channels,
                       pixels: start ..< min(range.upperBound, start + step), instructionSet: instructionSet)
        }
    }
}
