import CAnvilKernels

/// Max or average pooling over NHWC windows, vectorised across channels and parallel over
/// output rows, by Anvil's C kernels (`anvil_max_pool_lines`, `anvil_average_pool_lines`: each
/// output pixel's maxima or sums in registers, not in memory). Padded cells never win a max;
/// for the average they count only when asked.
struct PoolingKernel: RangeKernel {
    enum Mode: Sendable { case max, average(countsPadding: Bool) }

    let geometry: WindowGeometry
    let channels: Int
    let mode: Mode
    /// The body of the C kernels (``InstructionSet/current`` when built); tests force each one
    /// the CPU runs.
    var instructionSet = InstructionSet.current

    func run(_ io: KernelIO) {
        let g = geometry
        let lines = io.batch * g.outputHeight
        Compute.parallelFor(lines, costPerItem: g.outputWidth * channels * g.kernelHeight * g.kernelWidth, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        var shape = geometry.poolShape(channels: channels)
        switch mode {
        case .max:
            anvil_max_pool_lines(instructionSet.cValue, &shape, io.inputs[0], io.output, Int32(range.lowerBound),
                                 Int32(range.upperBound))
        case .average(let countsPadding):
            let divisor = anvil_pool_divisor(counts_padding: countsPadding ? 1 : 0, pad_bottom: Int32(geometry.padBottom),
                                             pad_right: Int32(geometry.padRight))
            anvil_average_pool_lines(instructionSet.cValue, &shape, divisor, io.inputs[0], io.output,
                                     Int32(range.lowerBound), Int32(range.upperBound))
        }
    }
}

extension WindowGeometry {
    /// The window as the C pooling kernels take it (`anvil_max_pool_lines`, `anvil_average_pool_lines`,
    /// `anvil_lp_pool_lines`).
    func poolShape(channels: Int) -> anvil_pool_shape {
        anvil_pool_shape(
            input_height: Int32(inputHeight), input_width: Int32(inputWidth), channels: Int32(channels),
            kernel_height: Int32(kernelHeight), kernel_width: Int32(kernelWidth),
            stride_height: Int32(strideHeight), stride_width: Int32(strideWidth),
            dilation_height: Int32(dilationHeight), dilation_width: Int32(dilationWidth),
            pad_top: Int32(padTop), pad_left: Int32(padLeft),
            output_height: Int32(outputHeight), output_width: Int32(outputWidth))
    }
}
