import CAnvilKernels

/// Padding by the C kernel `anvil_pad_lines`, parallel over output lines.
struct PadKernel: RangeKernel {
    let shape: anvil_pad_shape
    /// The body (``InstructionSet/current`` when built); tests force each one the CPU runs.
    var instructionSet = InstructionSet.current

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * Int(shape.output_height), costPerItem: Int(shape.output_width * shape.output_channels) / 4 + 1,
                            KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        var s = shape
        anvil_pad_lines(instructionSet.cValue, &s, io.inputs[0], io.output, Int32(range.lowerBound), Int32(range.upperBound))
    }
}
