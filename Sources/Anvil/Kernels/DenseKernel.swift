import COpenBLAS

/// A fully connected layer: `sgemv` for one image (3× faster than `sgemm` with N = 1),
/// `sgemm` for a batch; then bias and activation in one pass. Weights are `[out][in]`.
struct DenseKernel: Kernel {
    let inputs: Int
    let outputs: Int
    let weights: KernelWeights
    let activation: ActivationFunction

    func run(_ io: KernelIO) {
        if io.batch == 1 {
            cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(outputs), Int32(inputs), 1, weights.weightPointer,
                        Int32(inputs), io.inputs[0], 1, 0, io.output, 1)
        } else {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(io.batch), Int32(outputs), Int32(inputs),
                        1, io.inputs[0], Int32(inputs), weights.weightPointer, Int32(inputs), 0, io.output, Int32(outputs))
        }
        activation.applyWithBias(io.output, rows: io.batch, channels: outputs, bias: weights.biasPointer)
    }
}
