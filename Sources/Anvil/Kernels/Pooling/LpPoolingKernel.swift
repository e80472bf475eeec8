import CAnvilKernels

/// Lp pooling by the C kernel `anvil_lp_pool_lines`, parallel over output lines.
struct LpPoolingKernel: RangeKernel {
    let geometry: WindowGeometry
    let channels: Int
    let p: Float
    /// The body (``InstructionSet/current`` when built); tests force each one the CPU runs.
    var instructionSet = InstructionSet.current

    func run(_ io: KernelIO) {
        let g = geometry
        Compute.parallelFor(io.batch * g.outputHeight, costPerItem: g.outputWidth * channels * g.kernelHeight * g.kernelWidth,
                            KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        var shape = geometry.poolShape(channels: channels)
        anvil_lp_pool_lines(instructionSet.cValue, &shape, p, io.inputs[0], io.output, Int32(range.lowerBound), Int32(range.upperBound))
    }
}
