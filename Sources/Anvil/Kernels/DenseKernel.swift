import COpenBLAS

/// A fully connected layer: `sgemv` for one image (3× faster than `sgemm` with N = 1),
/// `sgemm` for a batch, split across threads; then bias and activation in one pass.
/// Weights are `[out][in]`.
struct DenseKernel: Kernel {
    let inputs: Int
    let outputs: Int
    let weights: KernelWeights
    let activation: ActivationFunction

    func run(_ io: KernelIO) {
        if io.batch == 1 {
            Gemm.multiply(outputs: outputs, depth: inputs, w: weights.weightPointer, x: io.inputs[0], y: io.output,
                          bias: weights.biasPointer, activation: activation)
        } else if io.batch < 16 {
            // Too few rows to split: split the outputs instead (columns of C, rows of W).
            Compute.parallelFor(outputs, costPerItem: inputs * io.batch,
                                OutputBand(kernel: self, input: io.inputs[0], output: io.output, batch: io.batch))
            activation.applyWithBias(io.output, rows: io.batch, channels: outputs, bias: weights.biasPointer)
        } else {
            Gemm.multiply(rows: io.batch, outputs: outputs, depth: inputs, a: io.inputs[0], lda: inputs,
                          b: weights.weightPointer, ldb: inputs, c: io.output, ldc: outputs,
                          bias: weights.biasPointer, activation: activation)
        }
    }

    /// Outputs `range` for a small batch: one GEMM against a band of weight rows.
    struct OutputBand: ParallelJob {
        let kernel: DenseKernel
        let input: UnsafePointer<Float>
        let output: UnsafeMutablePointer<Float>
        let batch: Int

        func run(_ range: Range<Int>) {
            let k = kernel.inputs
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(batch), Int32(range.count), Int32(k), 1, input, Int32(k),
                        kernel.weights.weightPointer + range.lowerBound * k, Int32(k), 0, output + range.lowerBound, Int32(kernel.outputs))
        }
    }
}
