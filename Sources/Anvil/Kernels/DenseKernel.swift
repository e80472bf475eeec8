import COpenBLAS

/// A fully connected layer, weights `[out][in]`: `sgemv` per image for small batches (3×
/// faster than `sgemm` with few rows), `sgemm` for larger ones, split across threads, with
/// the bias and activation fused in.
///
/// With `channelsFirstInput` the weights are PyTorch's `[out][c][h][w]`, used as they are:
/// each image is reordered to `C, H, W` in scratch memory instead — a few kilobytes per image
/// rather than a copy of the weights (411 MB for VGG16's first fully connected layer).
struct DenseKernel: Kernel {
    let inputs: Int
    let outputs: Int
    let weights: KernelWeights
    let activation: ActivationFunction
    /// The `H × W × C` input shape when the weights expect `C, H, W` order, else `nil`.
    let channelsFirstInput: Shape?

    /// Below this batch size each image is its own matrix-vector product.
    static let matrixVectorBatch = 8

    func scratchCount(batch: Int) -> Int { channelsFirstInput == nil ? 0 : batch * inputs }

    func run(_ io: KernelIO) {
        var input = io.inputs[0]
        if let shape = channelsFirstInput {
            Compute.parallelFor(io.batch, costPerItem: inputs, ChannelsFirst(shape: shape, source: input, destination: io.scratch))
            input = UnsafePointer(io.scratch)
        }
        if io.batch < Self.matrixVectorBatch {
            for image in 0 ..< io.batch {
                Gemm.multiply(outputs: outputs, depth: inputs, w: weights.weightPointer, x: input + image * inputs,
                              y: io.output + image * outputs, bias: weights.biasPointer, activation: activation)
            }
        } else {
            Gemm.multiply(rows: io.batch, outputs: outputs, depth: inputs, a: input, lda: inputs,
                          b: weights.weightPointer, ldb: inputs, c: io.output, ldc: outputs,
                          bias: weights.biasPointer, activation: activation)
        }
    }

    /// Reorders images from `H, W, C` to `C, H, W`.
    struct ChannelsFirst: ParallelJob {
        let shape: Shape
        let source: UnsafePointer<Float>
        let destination: UnsafeMutablePointer<Float>

        func run(_ range: Range<Int>) {
            let pixels = shape.height * shape.width, channels = shape.channels, count = shape.count
            for image in range {
                let from = source + image * count, to = destination + image * count
                for p in 0 ..< pixels { for c in 0 ..< channels { to[c * pixels + p] = from[p * channels + c] } }
            }
        }
    }
}
