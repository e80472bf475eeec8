import CAnvilKernels

/// LRN across channels by the C kernel `anvil_lrn_pixels`, parallel over pixels.
struct LocalResponseNormalizationKernel: RangeKernel {
    let channels: Int
    let size: Int
    let alpha: Float, beta: Float, bias: Float
    let pixels: Int
    /// The body (``InstructionSet/current`` when built); tests force each one the CPU runs.
    var instructionSet = InstructionSet.current

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * pixels, costPerItem: channels * (size + 4), KernelRange(kernel: self, io: io))
    }

    /// The loop body over pixels `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        anvil_lrn_pixels(instructionSet.cValue, io.inputs[0], io.output, Int32(channels), Int32(size), alpha, beta, bias,
                         range.lowerBound, range.upperBound)
    }
}
