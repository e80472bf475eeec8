import CAnvilKernels

/// Group / instance normalisation (per image: per-channel scale and shift from the group
/// moments, then one pass over the pixels) and layer normalisation over runs of contiguous
/// values (each pixel's channels, or the last 2 or 3 axes), by the C kernels of
/// `anvil_normalization.h`.
struct NormalizationKernel: RangeKernel {
    /// What is normalised together.
    enum Extent: Sendable {
        /// Groups of channels over all pixels of an image.
        case groups(Int)
        /// Each run of this many contiguous values (the trailing axes of layer normalisation;
        /// the channels when it is their count), with `gamma` and `beta` of as many values.
        case trailing(Int)
    }

    let extent: Extent
    /// Channels (`.groups`), or values per normalised run (`.trailing`).
    let channels: Int
    /// Pixels (`.groups`), or normalised runs (`.trailing`) per image.
    let pixels: Int
    let epsilon: Float
    let gamma: [Float]?
    let beta: [Float]?
    /// The body (``InstructionSet/current`` when built); tests force each one the CPU runs.
    var instructionSet = InstructionSet.current

    /// Reads `gamma` and `beta` when `affine`.
    init(over extent: Extent, epsilon: Float, affine: Bool, _ context: KernelContext) throws {
        let input = context.inputShapes[0]
        self.extent = extent
        switch extent {
        case .groups:
            self.channels = input.channels
            self.pixels = input.height * input.width
        case .trailing(let size):
            self.channels = size
            self.pixels = input.height * input.width * input.channels / size
        }
        self.epsilon = epsilon
        self.gamma = affine ? try context.parameter(.gamma).values : nil
        self.beta = affine ? try context.parameter(.beta).values : nil
    }

    /// Floats per image of scratch: the scale and shift per channel, then the moments (doubles).
    private var perImage: Int { 6 * channels + 4 }

    func scratchCount(batch: Int) -> Int {
        if case .groups = extent { return batch * perImage }
        return 0
    }

    func run(_ io: KernelIO) {
        if case .groups = extent {
            Compute.parallelFor(io.batch, costPerItem: pixels * channels * 2, Coefficients(kernel: self, io: io))
        }
        Compute.parallelFor(io.batch * pixels, costPerItem: channels * 2, KernelRange(kernel: self, io: io))
    }

    /// The per-channel scale and shift of each image, as a parallel job.
    private struct Coefficients: ParallelJob {
        let kernel: NormalizationKernel
        let io: KernelIO

        func run(_ range: Range<Int>) {
            guard case .groups(let groups) = kernel.extent else { return }
            let c = kernel.channels
            for image in range {
                let scratch = io.scratch + image * kernel.perImage
                kernel.withAffine { gamma, beta in
                    anvil_group_norm_coefficients(kernel.instructionSet.cValue, io.inputs[0] + image * kernel.pixels * c,
                                                  Int32(kernel.pixels), Int32(c), Int32(groups), kernel.epsilon, gamma, beta,
                                                  scratch, scratch + c, scratch + 2 * c)
                }
            }
        }
    }

    /// Calls `body` with `gamma` and `beta` (nil without `affine`).
    private func withAffine(_ body: (UnsafePointer<Float>?, UnsafePointer<Float>?) -> Void) {
        guard let gamma, let beta else { return body(nil, nil) }
        gamma.withUnsafeBufferPointer { g in beta.withUnsafeBufferPointer { b in body(g.baseAddress, b.baseAddress) } }
    }

    /// Normalises pixels `range` (over the whole batch).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let isa = instructionSet.cValue
        switch extent {
        case .trailing:
            withAffine { gamma, beta in
                anvil_layer_norm_pixels(isa, io.inputs[0], gamma, beta, io.output, Int32(channels), epsilon,
                                        range.lowerBound, range.upperBound)
            }
        case .groups:
            // Split the range at image boundaries: each image has its own coefficients.
            var start = range.lowerBound
            while start < range.upperBound {
                let image = start / pixels
                let end = min(range.upperBound, (image + 1) * pixels)
                let scratch = io.scratch + image * perImage
                anvil_scale_shift_pixels(isa, io.inputs[0], scratch, scratch + channels, io.output, Int32(channels), start, end)
                start = end
            }
        }
    }
}
