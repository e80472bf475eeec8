/// A 3×3 stride-1 convolution whose one-image choice is the direct kernel, which runs Winograd
/// F(4×4, 3×3) instead on calls with enough tiles — from the direct kernel's own packed weights
/// (``TapArrangement/directBlocks``), so it takes no memory beyond the direct kernel's.
///
/// Winograd's taps are transformed once per call and pair of output blocks, and its products
/// run on every tile of the call: with the 4 tiles of one 7 × 7 or 8 × 8 image the transform and
/// the narrow products cost more than the multiplies they save, with 8 or more they pay. The
/// products from taps split the pairs of output blocks among the threads, so a layer of fewer
/// pairs than threads (such as DenseNet-121's 128 → 32 layers on two threads) stays direct.
///
/// The choice depends only on the images in the call and ``Compute/threadCount``, so a given
/// batch and thread count always give the same bits (see docs/errors.md, "Determinism").
struct DirectOrWinogradKernel: Kernel {
    /// What runs on calls of few tiles, and owns the packed weights.
    let direct: DirectConvolutionKernel
    /// What runs on calls of ``minimumTiles`` or more, on the same weights.
    let winograd: WinogradConvolutionKernel

    /// The fewest 4 × 4 output tiles in a call for Winograd to run.
    static let minimumTiles = 8

    /// Winograd F(4×4) beside `direct`, reading its packed weights, bias and activation.
    init(direct: DirectConvolutionKernel) {
        precondition(WinogradConvolutionKernel.supports(geometry: direct.geometry, groups: 1))
        self.direct = direct
        let filters = WinogradFilters(directPacked: direct.packed, inputs: direct.inputChannels,
                                      outputs: direct.outputChannels)
        winograd = WinogradConvolutionKernel(variant: .f4x4, geometry: direct.geometry, inputChannels: direct.inputChannels,
                                             outputChannels: direct.outputChannels, filters: filters, bias: direct.bias,
                                             activation: direct.activation, instructionSet: direct.instructionSet)
    }

    /// Whether a call of `batch` images on `threads` threads runs Winograd.
    func runsWinograd(batch: Int, threads: Int) -> Bool {
        batch * winograd.tilesPerImage >= Self.minimumTiles && winograd.pairs >= threads
    }

    /// Room for whichever of the two runs (the larger: the choice also depends on the threads).
    func scratchCount(batch: Int) -> Int {
        max(direct.scratchCount(batch: batch), winograd.scratchCount(batch: batch))
    }

    func run(_ io: KernelIO) { run(io, threads: Compute.threadCount) }

    /// The call as it runs when ``Compute/threadCount`` is `threads` (tests pin the choice).
    func run(_ io: KernelIO, threads: Int) {
        if runsWinograd(batch: io.batch, threads: threads) { winograd.run(io) } else { direct.run(io) }
    }
}

extension DirectOrWinogradKernel: ActivationEndingKernel {
    /// The activation both kernels end with.
    var activation: ActivationFunction { direct.activation }
}
