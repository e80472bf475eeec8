import CAnvilKernels

/// Ungrouped convolution computed directly from the NHWC input by Anvil's C kernel
/// (`anvil_conv_direct`): tiles of 3 output pixels × 32 output channels (AVX2, or 6 × 16 for a
/// block of 16 alone; up to 6 × 64 with AVX-512) accumulate in registers over the window, so no im2col
/// matrix is written; 1×1 layers read the input as
/// it is. Padded inputs are first copied into a zero-bordered image in scratch memory. A second
/// input, when the compiler fuses a residual `Add` into the layer, is added to each output
/// before the activation, while the sums are still in registers.
struct DirectConvolutionKernel: Kernel {
    let geometry: WindowGeometry
    let inputChannels: Int
    let outputChannels: Int
    /// Weights packed by `anvil_conv_pack_weights`: blocks of 16 output channels.
    let packed: ParameterData
    let bias: ParameterData?
    /// Applied in the kernel when a clamp, afterwards otherwise (after a fused residual).
    var activation: ActivationFunction
    /// The C kernel's body (``InstructionSet/current`` when built); tests force each one the
    /// CPU runs.
    var instructionSet = InstructionSet.current

    /// Packs `weights` (rows `[o][kh][kw][c]`) for the kernel.
    init(geometry: WindowGeometry, inputChannels: Int, outputChannels: Int, weights: KernelWeights,
         activation: ActivationFunction) {
        self.geometry = geometry
        self.inputChannels = inputChannels
        self.outputChannels = outputChannels
        self.activation = activation
        self.bias = weights.bias
        self.packed = Self.pack(weights.weights, outputs: outputChannels,
                                depth: geometry.kernelHeight * geometry.kernelWidth * inputChannels)
    }

    /// Uses weights already packed by ``pack(_:outputs:depth:)`` (shared by the sizes of an open model).
    init(geometry: WindowGeometry, inputChannels: Int, outputChannels: Int, packed: ParameterData, bias: ParameterData?,
         activation: ActivationFunction) {
        self.geometry = geometry
        self.inputChannels = inputChannels
        self.outputChannels = outputChannels
        self.activation = activation
        self.bias = bias
        self.packed = packed
    }

    /// `weights` rows `[outputs][depth]` packed by `anvil_conv_pack_weights` into aligned memory.
    static func pack(_ weights: ParameterData, outputs: Int, depth: Int) -> ParameterData {
        let box = FloatBox(count: anvil_conv_packed_count(Int32(outputs), Int32(depth)))
        weights.withUnsafeBufferPointer { anvil_conv_pack_weights($0.baseAddress!, Int32(outputs), Int32(depth), box.pointer) }
        return ParameterData(buffer: box.buffer, owner: box)
    }

    var isPadded: Bool {
        let g = geometry
        return g.padTop != 0 || g.padLeft != 0 || g.padBottom != 0 || g.padRight != 0
    }
    var paddedHeight: Int { geometry.inputHeight + geometry.padTop + geometry.padBottom }
    var paddedWidth: Int { geometry.inputWidth + geometry.padLeft + geometry.padRight }
    var paddedImageCount: Int { paddedHeight * paddedWidth * inputChannels }
    var pixels: Int { geometry.outputHeight * geometry.outputWidth }
    var depth: Int { geometry.kernelHeight * geometry.kernelWidth * inputChannels }

    /// Output pixels per parallel work item: a multiple of every body's tile pixels (the C kernel's
    /// `ANVIL_CONV_CHUNK_PIXELS`).
    static let chunkPixels = Int(ANVIL_CONV_CHUNK_PIXELS)

    /// Saturates rather than traps for absurd batches, which the workspace then refuses.
    func scratchCount(batch: Int) -> Int { isPadded ? saturatingProduct(batch, paddedImageCount) : 0 }

    /// The residual, when it has one: each tile loads its residual values before it stores its
    /// outputs there, and threads split the output the same way as the residual.
    var inPlaceInput: Int? { 1 }

    func run(_ io: KernelIO) {
        var input = io.inputs[0]
        // A second input is a residual fused in by the compiler (`conv + bias + residual`, then
        // the activation), shaped like the output.
        let residual = io.inputs.count > 1 ? io.inputs[1] : nil
        if isPadded {
            Compute.parallelFor(io.batch * paddedHeight, costPerItem: paddedWidth * inputChannels,
                                Pad(kernel: self, source: input, destination: io.scratch))
            input = UnsafePointer(io.scratch)
        }
        if splitsBlocks(batch: io.batch, threads: Compute.threadCount) {
            Compute.parallelFor(blocks, costPerItem: io.batch * pixels * depth * Int(ANVIL_CONV_BLOCK),
                                Blocks(kernel: self, input: input, output: io.output, batch: io.batch, residual: residual))
            return
        }
        let chunks = (pixels + Self.chunkPixels - 1) / Self.chunkPixels
        Compute.parallelFor(io.batch * chunks, costPerItem: Self.chunkPixels * depth * outputChannels,
                            Chunks(kernel: self, input: input, output: io.output, chunks: chunks, residual: residual))
    }

    /// Blocks of 16 output channels.
    var blocks: Int { (outputChannels + Int(ANVIL_CONV_BLOCK) - 1) / Int(ANVIL_CONV_BLOCK) }

    /// At most this many output pixels in the whole batch, threads split the output channels
    /// rather than the pixels: each then reads only its share of the weights, which for such
    /// layers (14×14 and 7×7 maps of 512–2048 channels, 1–9 MB of weights) is the larger cost,
    /// and the shares are even.
    static let blockSplitPixels = 256

    /// Blocks the widest tile of the kernel's body takes at once (`anvil_conv_tile_blocks`, what the
    /// C body's `tile_shape` is made of): a thread given fewer broadcasts each input to fewer outputs.
    var tileBlocks: Int { Int(anvil_conv_tile_blocks(instructionSet.cValue)) }

    /// Whether threads split the output channels (``Blocks``) rather than the pixels
    /// (``Chunks``): for few pixels (``blockSplitPixels``), when every thread gets at least a
    /// whole tile's blocks. With fewer blocks a thread's share would run narrow tiles, and the
    /// weights, a block's for each of a few blocks, are small enough to read twice (as in
    /// DenseNet-121's 14 × 14 128 → 32 layers, two blocks, whose pixels split over two threads
    /// run faster than on one).
    func splitsBlocks(batch: Int, threads: Int) -> Bool {
        batch * pixels <= Self.blockSplitPixels && (threads == 1 || blocks >= threads * tileBlocks)
    }

    /// The C description of the layer.
    var shape: anvil_conv_shape {
        let g = geometry
        let clamp = ActivationClamp(activation)
        return anvil_conv_shape(
            input_width: Int32(isPadded ? paddedWidth : g.inputWidth), channels: Int32(inputChannels),
            kernel_height: Int32(g.kernelHeight), kernel_width: Int32(g.kernelWidth),
            stride_height: Int32(g.strideHeight), stride_width: Int32(g.strideWidth),
            dilation_height: Int32(g.dilationHeight), dilation_width: Int32(g.dilationWidth),
            output_width: Int32(g.outputWidth), outputs: Int32(outputChannels),
            clamp_min: clamp.min, clamp_max: clamp.max)
    }

    /// Output pixels `pixels` and channel blocks `blocks` of image `image` of the batch: the C
    /// kernel, then whatever of the activation it does not apply.
    func convolve(image: Int, pixels range: Range<Int>, blocks: Range<Int>, input: UnsafePointer<Float>,
                  output: UnsafeMutablePointer<Float>, residual: UnsafePointer<Float>?, shape: inout anvil_conv_shape) {
        let outputs = outputChannels, imageOutputs = pixels * outputs
        let out = output + image * imageOutputs
        anvil_conv_direct(instructionSet.cValue, &shape, input + image * inputImageCount, packed.buffer.baseAddress!, bias?.buffer.baseAddress,
                          residual.map { $0 + image * imageOutputs }, out, Int32(range.lowerBound), Int32(range.upperBound),
                          Int32(blocks.lowerBound), Int32(blocks.upperBound))
        let rest = ActivationClamp(activation).rest
        guard rest != .none else { return }
        let block = Int(ANVIL_CONV_BLOCK)
        let first = blocks.lowerBound * block, count = min(outputs, blocks.upperBound * block) - first
        if count == outputs {
            rest.apply(out + range.lowerBound * outputs, count: range.count * outputs, instructionSet: instructionSet)
        } else {
            for pixel in range { rest.apply(out + pixel * outputs + first, count: count, instructionSet: instructionSet) }
        }
    }

    /// Floats of one (padded) input image.
    var inputImageCount: Int { isPadded ? paddedImageCount : geometry.inputHeight * geometry.inputWidth * inputChannels }

    /// Work items: blocks of 16 output channels, every pixel of every image.
    struct Blocks: ParallelJob {
        static var balancesParts: Bool { true }
        /// Claims of whole tiles: a thread given fewer blocks broadcasts each input to fewer
        /// outputs. (Larger claims gain nothing.)
        var claimMultiple: Int { kernel.tileBlocks }

        let kernel: DirectConvolutionKernel
        let input: UnsafePointer<Float>
        let output: UnsafeMutablePointer<Float>
        let batch: Int
        /// A tensor shaped like the output, added before the activation (a fused residual).
        var residual: UnsafePointer<Float>? = nil

        func run(_ range: Range<Int>) {
            var shape = kernel.shape
            for image in 0 ..< batch {
                kernel.convolve(image: image, pixels: 0 ..< kernel.pixels, blocks: range, input: input, output: output,
                                residual: residual, shape: &shape)
            }
        }
    }

    /// Copies images into zero-bordered ones of `paddedHeight × paddedWidth`, row by row (items
    /// `image * paddedHeight + row`): one image's copy is split among the threads too (ResNet-50's
    /// 56 × 56 × 128 input of its first stride-2 layer, 1.7 MB, on one thread alone at batch 1).
    struct Pad: ParallelJob {
        static var balancesParts: Bool { true }

        let kernel: DirectConvolutionKernel
        let source: UnsafePointer<Float>
        let destination: UnsafeMutablePointer<Float>

        func run(_ range: Range<Int>) {
            let g = kernel.geometry, c = kernel.inputChannels
            let line = g.inputWidth * c, paddedLine = kernel.paddedWidth * c
            for item in range {
                let image = item / kernel.paddedHeight, y = item % kernel.paddedHeight - g.padTop
                let row = destination + image * kernel.paddedImageCount + (y + g.padTop) * paddedLine
                guard y >= 0 && y < g.inputHeight else {
                    row.update(repeating: 0, count: paddedLine)
                    continue
                }
                row.update(repeating: 0, count: g.padLeft * c)
                (row + g.padLeft * c).update(from: source + (image * g.inputHeight + y) * line, count: line)
                (row + g.padLeft * c + line).update(repeating: 0, count: g.padRight * c)
            }
        }
    }

    /// Work items `image * chunks + chunk`, each `chunkPixels` output pixels of one image.
    struct Chunks: ParallelJob {
        static var balancesParts: Bool { true }

        let kernel: DirectConvolutionKernel
        let input: UnsafePointer<Float>
        let output: UnsafeMutablePointer<Float>
        let chunks: Int
        /// A tensor shaped like the output, added before the activation (a fused residual).
        var residual: UnsafePointer<Float>? = nil

        func run(_ range: Range<Int>) {
            var shape = kernel.shape
            var item = range.lowerBound
            while item < range.upperBound {
                // One call per image: all of this range's chunks of it.
                let image = item / chunks
                let lastItem = min(range.upperBound, (image + 1) * chunks)
                let first = (item - image * chunks) * DirectConvolutionKernel.chunkPixels
                let last = min(kernel.pixels, (lastItem - image * chunks) * DirectConvolutionKernel.chunkPixels)
                kernel.convolve(image: image, pixels: first ..< last, blocks: 0 ..< kernel.blocks, input: input,
                                output: output, residual: residual, shape: &shape)
                item = lastItem
            }
        }
    }
}
