import CAnvilKernels

/// Resampling (Resize: nearest, bilinear, bicubic, antialiased, crop-and-resize) with precomputed
/// source indices and weights per output row and column, run by the C kernel
/// `anvil_resample_lines`, parallel over output lines: in one pass over every (row, column) tap
/// pair, or, when that costs more, in two (the row taps over whole input lines into scratch,
/// then the column taps).
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
    /// Whether to run in two stages (rows, then columns); chosen by cost, tests force both.
    var twoStages: Bool
    /// The body (``InstructionSet/current`` when built); tests force each one the CPU runs.
    var instructionSet = InstructionSet.current

    init(input: Shape, output: Shape, rows: Taps, columns: Taps, extrapolationValue: Float) {
        self.input = input
        self.output = output
        self.rows = rows
        self.columns = columns
        self.extrapolationValue = extrapolationValue
        // Cost per output line, in multiply-adds plus a fixed cost per weighted run of values (a
        // call of the body's axpy, which matters with few channels): every tap pair per pixel, or
        // the row taps over the whole input line plus the column taps per pixel.
        let call = 8, c = input.channels
        let direct = output.width * rows.count * columns.count * (call + c)
        let staged = rows.count * (call + input.width * c) + output.width * columns.count * (call + c)
        twoStages = rows.count * columns.count > 1 && staged < direct
    }

    /// The rows stage's lines (`batch × output height × input width × channels`) when in two stages.
    func scratchCount(batch: Int) -> Int {
        twoStages ? saturatingProduct(batch, output.height, input.width, input.channels) : 0
    }

    func run(_ io: KernelIO) {
        let lines = io.batch * output.height
        guard twoStages else {
            Compute.parallelFor(lines, costPerItem: output.width * input.channels * rows.count * columns.count,
                                KernelRange(kernel: self, io: io))
            return
        }
        Compute.parallelFor(lines, costPerItem: input.width * input.channels * rows.count,
                            Stage(kernel: self, stage: ANVIL_RESAMPLE_ROWS, input: io.inputs[0], output: io.scratch))
        Compute.parallelFor(lines, costPerItem: output.width * input.channels * columns.count,
                            Stage(kernel: self, stage: ANVIL_RESAMPLE_COLUMNS, input: io.scratch, output: io.output))
    }

    /// The loop body over `range` in one pass (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        run(range, stage: ANVIL_RESAMPLE_DIRECT, input: io.inputs[0], output: io.output)
    }

    /// One stage of the two, as a parallel job.
    struct Stage: ParallelJob {
        let kernel: ResizeKernel
        let stage: anvil_resample_stage
        let input: UnsafePointer<Float>
        let output: UnsafeMutablePointer<Float>

        func run(_ range: Range<Int>) { kernel.run(range, stage: stage, input: input, output: output) }
    }

    /// Output lines `range` of `stage` from `input` into `output`.
    func run(_ range: Range<Int>, stage: anvil_resample_stage, input source: UnsafePointer<Float>,
             output destination: UnsafeMutablePointer<Float>) {
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
                extrapolation_value: extrapolationValue, stage: stage)
            anvil_resample_lines(instructionSet.cValue, &shape, source, destination,
                                 Int32(range.lowerBound), Int32(range.upperBound))
        }
        }
        }
        }
        }
        }
    }
}
