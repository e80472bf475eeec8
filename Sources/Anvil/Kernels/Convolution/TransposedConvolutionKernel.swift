import CAnvilKernels

/// Transposed convolution as GEMM + col2im: per image and group, OpenBLAS multiplies the input
/// pixels `[H·W][in per group]` by the packed weights `[kh·kw·out per group][in per group]ᵀ`
/// into a column buffer (scratch), then the C kernel `anvil_col2im_lines` gathers each output
/// pixel's contributions, adds the bias, and the activation follows on the same lines.
struct TransposedConvolutionKernel: EpilogueReportingKernel {
    let shape: anvil_col2im_shape
    let inputChannels: Int
    /// `[group][ky][kx][output in group][input in group]`.
    let weights: [Float]
    let bias: [Float]?
    let activation: ActivationFunction
    /// The col2im body (``InstructionSet/current`` when built); tests force each one the CPU runs.
    var instructionSet = InstructionSet.current

    var appliedActivation: ActivationFunction { activation }
    var addsResidual: Bool { false }

    private var pixels: Int { Int(shape.input_height) * Int(shape.input_width) }
    private var columnsPerPixel: Int { Int(shape.groups * shape.kernel_height * shape.kernel_width * shape.group_channels) }
    private var outputCount: Int { Int(shape.output_height) * Int(shape.output_width) * Int(shape.groups * shape.group_channels) }

    /// One image's column buffer.
    func scratchCount(batch: Int) -> Int { pixels * columnsPerPixel }

    func run(_ io: KernelIO) {
        let groups = Int(shape.groups), perGroup = Int(shape.group_channels)
        let inputsPerGroup = inputChannels / groups
        let taps = Int(shape.kernel_height * shape.kernel_width)
        let rowsPerGroup = taps * perGroup
        weights.withUnsafeBufferPointer { w in
            for image in 0 ..< io.batch {
                let x = io.inputs[0] + image * pixels * inputChannels
                for g in 0 ..< groups {
                    Gemm.multiply(rows: pixels, outputs: rowsPerGroup, depth: inputsPerGroup,
                                  a: x + g * inputsPerGroup, lda: inputChannels,
                                  b: w.baseAddress! + g * rowsPerGroup * inputsPerGroup, ldb: inputsPerGroup,
                                  c: io.scratch + g * rowsPerGroup, ldc: columnsPerPixel)
                }
                let lines = Int(shape.output_height)
                let job = Lines(kernel: self, columns: io.scratch, output: io.output + image * outputCount)
                Compute.parallelFor(lines, costPerItem: Int(shape.output_width) * perGroup * groups * taps, job)
            }
        }
    }

    /// Output lines of one image, as a parallel job.
    private struct Lines: ParallelJob {
        let kernel: TransposedConvolutionKernel
        let columns: UnsafeMutablePointer<Float>
        let output: UnsafeMutablePointer<Float>

        func run(_ range: Range<Int>) { kernel.lines(range, columns: columns, output: output) }
    }

    /// col2im and the activation over output lines `range` of one image.
    func lines(_ range: Range<Int>, columns: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        var s = shape
        let width = Int(shape.output_width) * Int(shape.groups * shape.group_channels)
        if let bias {
            bias.withUnsafeBufferPointer { b in
                anvil_col2im_lines(instructionSet.cValue, &s, columns, b.baseAddress, output,
                                   Int32(range.lowerBound), Int32(range.upperBound))
            }
        } else {
            anvil_col2im_lines(instructionSet.cValue, &s, columns, nil, output, Int32(range.lowerBound), Int32(range.upperBound))
        }
        activation.apply(output + range.lowerBound * width, count: range.count * width, instructionSet: instructionSet)
    }
}
