/// Concatenates inputs along channels, pixel by pixel; then, when the compiler fused them, a
/// following BatchNormalization's per-channel `scale · x + shift` and an activation (DenseNet's
/// concatenation → norm → relu before each layer: one pass over the joined tensor, not three).
struct ConcatenateKernel: RangeKernel, EpilogueReportingKernel {
    let channels: [Int]
    let pixelsPerImage: Int
    /// The folded BatchNormalization's scale and shift per output channel, if any.
    var affine: (scale: ParameterData, shift: ParameterData)? = nil
    /// The activation applied last (after the affine map).
    var activation: ActivationFunction = .none
    /// The body of the C affine map (``InstructionSet/current`` when built); tests force each one.
    var instructionSet = InstructionSet.current

    /// The activation the kernel applies to its output, last.
    var appliedActivation: ActivationFunction { activation }
    /// It takes no residual.
    var addsResidual: Bool { false }

    func run(_ io: KernelIO) {
        let total = channels.reduce(0, +)
        let rows = io.batch * pixelsPerImage
        Compute.parallelFor(rows, costPerItem: total, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let total = channels.reduce(0, +)
        // With a fused epilogue, a chunk at a time: the affine map and the activation rewrite the
        // joined pixels while they are still in L1 (``ChannelAffineKernel/chunkPixels(channels:)``).
        let step = affine == nil && activation == .none ? max(1, range.count) : ChannelAffineKernel.chunkPixels(channels: total)
        for start in stride(from: range.lowerBound, to: range.upperBound, by: step) {
            let end = min(range.upperBound, start + step)
            for row in start ..< end {
                var out = io.output + row * total
                for index in channels.indices {
                    let count = channels[index]
                    out.update(from: io.inputs[index] + row * count, count: count)
                    out += count
                }
            }
            ChannelAffineKernel.apply(affine, then: activation, input: io.output, output: io.output, channels: total,
                                      pixels: start ..< end, instructionSet: instructionSet)
        }
    }
}
