import CAnvilKernels

/// Resampling (Resize: nearest, bilinear, bicubic, antialiased, crop-and-resize) with precomputed
/// source indices and weights per output row and column, run by the C kernel
/// `anvil_resample_lines`, parallel over output lines.
struct ResizeKernel: RangeKernel {
    /// For each output coordinate: `count` source coordinates and their weights, and (crop-and-resize
    /// only, else empty) whether its source lies outside the input.
    struct Taps: Sendable {
        var count: Int
        var index: [Int32], weight: [Float]
        var outside: [UInt8]
    }

    let input: Shape
    let output: Shape
    let rows: Taps
    let columns: Taps
    /// The value of outputs on a row or column marked outside.
    let extrapolationValue: Float
    /// The body (``InstructionSet/current`` when built); tests force each one the CPU runs.
    var instructionSet = InstructionSet.current

    func run(_ io: KernelIO) {
        let lines = io.batch * output.height
        Compute.parallelFor(lines, costPerItem: output.width * input.channels * rows.count * columns.count,
                            KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        rows.index.withUnsafeBufferPointer { rowIndex in
        rows.weight.withUnsafeBufferPointer { rowWeight in
        rows.outside.withUnsafeBufferPointer { rowOutside in
        columns.index.withUnsafeBufferPointer { columnIndex in
        columns.weight.withUnsafeBufferPointer { columnWeight in
        columns.outside.withUnsafeBufferPointer { columnOutside in
            var shape = anvil_resample_shape(
                input_height: Int32(input.height), input_width: Int32(input.width),
                channels: Int32(input.channels), output_height: Int32(output.height),
                output_width: Int32(output.width), row_taps: Int32(rows.count),
                column_taps: Int32(columns.count), row_index: rowIndex.baseAddress,
                row_weight: rowWeight.baseAddress, column_index: columnIndex.baseAddress,
                column_weight: columnWeight.baseAddress,
                row_outside: rows.outside.isEmpty ? nil : rowOutside.baseAddress,
                column_outside: columns.outside.isEmpty ? nil : columnOutside.baseAddress,
                extrapolation_value: extrapolationValue)
            anvil_resample_lines(instructionSet.cValue, &shape, io.inputs[0], io.output,
                                 Int32(range.lowerBound), Int32(range.upperBound))
        }
        }
        }
        }
        }
        }
    }
}
