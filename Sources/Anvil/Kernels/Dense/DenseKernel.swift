import CAnvilKernels

/// A fully connected layer, weights `[out][in]` used in place. When the layer's weights are
/// under 16 MB it keeps a packed copy of them and runs batches of 2 or more through the
/// direct-convolution kernel as a 1×1 convolution over the batch (its register tiles beat both
/// `sgemm` and the small-batch kernel there). A lone image, and batches under 16 of larger
/// layers, run Anvil's small-batch C kernel (`anvil_dense_rows`: each weight row read once for
/// up to eight images; `sgemm` is poor with so few rows, and one `sgemv` per image reads the
/// weights once per image); larger batches of those run `sgemm` — VGG16's 400 MB layers are
/// never copied. Work is split across threads over output rows (blocks of them for the packed
/// path), with the bias and activation fused in.
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
    /// The body of both C kernels it runs (``InstructionSet/current`` when built); tests force
    /// each one the CPU runs.
    var instructionSet = InstructionSet.current
    /// The weights packed for `anvil_conv_direct`, for layers under ``packedWeightLimit``.
    let packed: ParameterData?

    /// Below this batch size the small-batch kernel runs for layers without a packed copy.
    static let smallBatch = 16
    /// From this batch size on the packed direct-convolution path runs where there is a packed
    /// copy: for a lone image both stream the weights once, and the row kernel is the quicker.
    static let packedFromBatch = 2
    /// Layers with fewer weights than this keep a packed copy for large batches (16 MB).
    static let packedWeightLimit = 4_000_000

    /// Prepares the kernel; packs the weights when the layer is small enough.
    init(inputs: Int, outputs: Int, weights: KernelWeights, activation: ActivationFunction, channelsFirstInput: Shape?) {
        self.inputs = inputs
        self.outputs = outputs
        self.weights = weights
        self.activation = activation
        self.channelsFirstInput = channelsFirstInput
        guard inputs * outputs < Self.packedWeightLimit else {
            packed = nil
            return
        }
        packed = DirectConvolutionKernel.pack(weights.weights, outputs: outputs, depth: inputs)
    }

    /// Saturates rather than traps for absurd batches, which the workspace then refuses.
    func scratchCount(batch: Int) -> Int { channelsFirstInput == nil ? 0 : saturatingProduct(batch, inputs) }

    func run(_ io: KernelIO) {
        var input = io.inputs[0]
        if let shape = channelsFirstInput {
            Compute.parallelFor(io.batch, costPerItem: inputs, ChannelsFirst(shape: shape, source: input, destination: io.scratch))
            input = UnsafePointer(io.scratch)
        }
        if let packed, io.batch >= Self.packedFromBatch {
            // Threads take blocks of 16 output channels, every image each: each reads its share
            // of the weights once, and the shares are even. (Split by groups of 24 images, a
            // batch of 64 gave one thread 24 images and the other 40, each reading all weights.)
            let blocks = (outputs + Int(ANVIL_CONV_BLOCK) - 1) / Int(ANVIL_CONV_BLOCK)
            Compute.parallelFor(blocks, costPerItem: io.batch * inputs * Int(ANVIL_CONV_BLOCK),
                                Packed(kernel: self, weights: packed.buffer.baseAddress!, x: input, y: io.output, batch: io.batch))
        } else if io.batch < Self.smallBatch {
            Compute.parallelFor(outputs, costPerItem: inputs * io.batch,
                                SmallBatch(kernel: self, x: input, y: io.output, batch: io.batch))
        } else {
            Gemm.multiply(rows: io.batch, outputs: outputs, depth: inputs, a: input, lda: inputs,
                          b: weights.weightPointer, ldb: inputs, c: io.output, ldc: outputs,
                          bias: weights.biasPointer, activation: activation)
        }
    }

    /// A range of blocks of 16 output channels for the whole batch through the
    /// direct-convolution kernel, as a parallel job: the batch is one row of `batch` pixels
    /// with `inputs` channels and a 1×1 kernel.
    struct Packed: ParallelJob {
        let kernel: DenseKernel
        let weights: UnsafePointer<Float>
        let x: UnsafePointer<Float>
        let y: UnsafeMutablePointer<Float>
        let batch: Int

        func run(_ range: Range<Int>) {
            let clamp = ActivationClamp(kernel.activation)
            var shape = anvil_conv_shape(input_width: Int32(batch), channels: Int32(kernel.inputs), kernel_height: 1,
                                         kernel_width: 1, stride_height: 1, stride_width: 1, dilation_height: 1,
                                         dilation_width: 1, output_width: Int32(batch), outputs: Int32(kernel.outputs),
                                         clamp_min: clamp.min, clamp_max: clamp.max)
            anvil_conv_direct(kernel.instructionSet.cValue, &shape, x, weights, kernel.weights.biasPointer, nil, y, 0, Int32(batch),
                              Int32(range.lowerBound), Int32(range.upperBound))
            if clamp.rest != .none {
                let block = Int(ANVIL_CONV_BLOCK)
                let first = range.lowerBound * block, count = min(kernel.outputs, range.upperBound * block) - first
                for image in 0 ..< batch { clamp.rest.apply(y + image * kernel.outputs + first, count: count, instructionSet: kernel.instructionSet) }
            }
        }
    }

    /// Output rows `range` of every image, as a parallel job.
    struct SmallBatch: ParallelJob {
        let kernel: DenseKernel
        let x: UnsafePointer<Float>
        let y: UnsafeMutablePointer<Float>
        let batch: Int

        func run(_ range: Range<Int>) {
            let clamp = ActivationClamp(kernel.activation)
            anvil_dense_rows(kernel.instructionSet.cValue, kernel.weights.weightPointer, x, kernel.weights.biasPointer, y, Int32(kernel.inputs),
                             Int32(kernel.outputs), Int32(batch), Int32(range.lowerBound), Int32(range.upperBound),
                             clamp.min, clamp.max)
            if clamp.rest != .none {
                for image in 0 ..< batch { clamp.rest.apply(y + image * kernel.outputs + range.lowerBound, count: range.count,
                                                                   instructionSet: kernel.instructionSet) }
            }
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
