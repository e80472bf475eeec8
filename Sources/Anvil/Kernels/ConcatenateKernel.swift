import CAnvilKernels

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

    /// About this many output floats (16 KB) per chunk of pixels: the affine map and the
    /// activation rewrite a chunk while it is still in L1 after the copies.
    static let chunkFloats = 4_096

    func run(_ io: KernelIO) {
        let total = channels.reduce(0, +)
        let rows = io.batch * pixelsPerImage
        Compute.parallelFor(rows, costPerItem: total, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let total = channels.reduce(0, +)
        let step = affine == nil && activation == .none ? range.count : max(1, Self.chunkFloats / max(1, total))
        var start = range.lowerBound
        while start < range.upperBound {
            let end = min(range.upperBound, start + step)
            for row in start ..< end {
                var out = io.output + row * total
                for index in channels.indices {
                    let count = channels[index]
                    out.update(from: io.inputs[index] + row * count, count: count)
                    out += count
                }
            }
            if let affine {
                // In place: each value is read and then written at the same index.
                anvil_scale_shift_pixels(instructionSet.cValue, io.output, affine.scale.buffer.baseAddress!,
                                         affine.shift.buffer.baseAddress!, io.output, Int32(total), start, end)
            }
            activation.apply(io.output + start * total, count: (end - start) * total, instructionSet: instructionSet)
            start = end
        }
    }
}
