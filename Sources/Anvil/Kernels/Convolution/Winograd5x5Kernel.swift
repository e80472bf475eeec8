import CAnvilKernels

/// 5×5, stride-1, undilated, ungrouped convolution by Winograd's F(2×2, 5×5) in Anvil's C
/// kernel (`anvil_winograd5`): 36 multiplies per 2×2 output tile and channel pair instead of
/// 100. The input and output transforms are fused with the products, six tiles at a time in
/// cache (see `winograd_5x5.c`), so the small channel counts of 5×5 layers (MNIST's conv2,
/// 32 → 64) still gain: no padded copy of the input, no transformed tensors in memory.
///
/// The filters are transformed once, at construction, and take 36/25 of the weights' memory.
/// Threads take the tiles in claims of six-tile groups; each thread has its own slot of scratch memory.
struct Winograd5x5Kernel: Kernel {
    let geometry: WindowGeometry
    let inputChannels: Int
    let outputChannels: Int
    /// `U = G g Gᵀ` per filter, from `anvil_winograd5_transform_filters`.
    let filters: ParameterData
    let bias: ParameterData?
    let activation: ActivationFunction
    /// The C kernel's body (``InstructionSet/current`` when built); tests force each one the
    /// CPU runs.
    var instructionSet = InstructionSet.current

    /// Transforms `weights` (rows `[o][5][5][c]`).
    init(geometry: WindowGeometry, inputChannels: Int, outputChannels: Int, weights: KernelWeights,
         activation: ActivationFunction) {
        self.init(geometry: geometry, inputChannels: inputChannels, outputChannels: outputChannels,
                  filters: Self.transformFilters(weights, inputChannels: inputChannels, outputChannels: outputChannels),
                  bias: weights.bias, activation: activation)
    }

    /// Uses filters already transformed by ``transformFilters(_:inputChannels:outputChannels:)``
    /// (shared by the sizes of an open model).
    init(geometry: WindowGeometry, inputChannels: Int, outputChannels: Int, filters: ParameterData, bias: ParameterData?,
         activation: ActivationFunction) {
        precondition(Self.supports(geometry: geometry), "F(2×2, 5×5) needs a 5×5, stride 1, dilation 1 convolution")
        self.geometry = geometry
        self.inputChannels = inputChannels
        self.outputChannels = outputChannels
        self.bias = bias
        self.activation = activation
        self.filters = filters
    }

    /// `U = G g Gᵀ` of every filter of `weights` (rows `[o][5][5][c]`).
    static func transformFilters(_ weights: KernelWeights, inputChannels: Int, outputChannels: Int) -> ParameterData {
        let box = FloatBox(count: anvil_winograd5_filter_count(Int32(outputChannels), Int32(inputChannels)))
        weights.weights.withUnsafeBufferPointer {
            anvil_winograd5_transform_filters($0.baseAddress!, Int32(outputChannels), Int32(inputChannels), box.pointer)
        }
        return ParameterData(buffer: box.buffer, owner: box)
    }

    /// Whether the kernel can compute this convolution at all.
    static func supports(geometry g: WindowGeometry) -> Bool {
        g.kernelHeight == 5 && g.kernelWidth == 5 && g.strideHeight == 1 && g.strideWidth == 1
            && g.dilationHeight == 1 && g.dilationWidth == 1
    }

    /// The C description of the layer.
    var shape: anvil_winograd5_shape {
        let g = geometry, clamp = ActivationClamp(activation)
        return anvil_winograd5_shape(
            input_height: Int32(g.inputHeight), input_width: Int32(g.inputWidth), channels: Int32(inputChannels),
            output_height: Int32(g.outputHeight), output_width: Int32(g.outputWidth), outputs: Int32(outputChannels),
            pad_top: Int32(g.padTop), pad_left: Int32(g.padLeft), clamp_min: clamp.min, clamp_max: clamp.max)
    }

    /// Floats of one thread's scratch slot, a whole number of cache lines.
    var slotCount: Int { (Int(anvil_winograd5_scratch_count(Int32(inputChannels))) + 15) & ~15 }

    /// One slot per thread that can run; the batch does not matter.
    func scratchCount(batch: Int) -> Int { saturatingProduct(Compute.maximumThreadCount, slotCount) + 16 }

    func run(_ io: KernelIO) {
        var shape = self.shape
        let tiles = io.batch * anvil_winograd5_tiles_per_image(&shape)
        let groups = (tiles + 5) / 6
        // 64-byte aligned slots, one per participant.
        let address = (UInt(bitPattern: io.scratch) + 63) & ~UInt(63)
        let scratch = UnsafeMutablePointer<Float>(bitPattern: address)!
        Compute.parallelFor(groups, costPerItem: 6 * 36 * inputChannels * outputChannels,
                            Groups(kernel: self, shape: shape, input: io.inputs[0], output: io.output, scratch: scratch,
                                   tiles: tiles))
        let clamp = ActivationClamp(activation)
        if clamp.rest != .none { clamp.rest.apply(io.output, count: io.outputBuffer.count, instructionSet: instructionSet) }
    }

    /// A range of the groups of six tiles, with the participant's scratch slot: claims are
    /// whole groups, so every tile is computed as in one call over all of them.
    struct Groups: ParallelJob {
        static var balancesParts: Bool { true }

        let kernel: Winograd5x5Kernel
        let shape: anvil_winograd5_shape
        let input: UnsafePointer<Float>
        let output: UnsafeMutablePointer<Float>
        let scratch: UnsafeMutablePointer<Float>
        let tiles: Int

        func run(_ range: Range<Int>) { run(range, participant: 0) }

        func run(_ range: Range<Int>, participant: Int) {
            var shape = self.shape
            let first = min(tiles, range.lowerBound * 6), last = min(tiles, range.upperBound * 6)
            guard first < last else { return }
            anvil_winograd5(kernel.instructionSet.cValue, &shape, input, kernel.filters.buffer.baseAddress!, kernel.bias?.buffer.baseAddress, output,
                            first, last, scratch + participant * kernel.slotCount)
        }
    }
}
