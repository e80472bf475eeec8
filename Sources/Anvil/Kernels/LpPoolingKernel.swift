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
        let g = geometry
        var shape = anvil_pool_shape(
            input_height: Int32(g.inputHeight), input_width: Int32(g.inputWidth), channels: Int32(channels),
            kernel_height: Int32(g.kernelHeight), kernel_width: Int32(g.kernelWidth),
            stride_height: Int32(g.strideHeight), stride_width: Int32(g.strideWidth),
            dilation_height: Int32(g.dilationHeight), dilation_width: Int32(g.dilationWidth),
            pad_top: Int32(g.padTop), pad_left: Int32(g.padLeft),
            output_height: Int32(g.outputHeight), output_width: Int32(g.outputWidth))
        anvil_lp_pool_lines(instructionSet.cValue, &shape, p, io.inputs[0], io.output, Int32(range.lowerBound), Int32(range.upperBound))
    }
}
