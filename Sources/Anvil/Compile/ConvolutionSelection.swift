import Foundation

// How compile computes a convolution: the one place that owns the order of preference between
// the kernels, the cost model that weighs Winograd against the direct kernel, and the
// `ANVIL_CONVOLUTION` override (read once). The kernels themselves only say what they support.

/// The ways Anvil computes a convolution, in its order of preference.
enum ConvolutionAlgorithm: String, Sendable, CaseIterable {
    /// One input channel per group (MobileNet's depthwise layers): ``DepthwiseConvolutionKernel``.
    case depthwise
    /// 3×3 stride 1 by Winograd F(4×4, 3×3): ``WinogradConvolutionKernel``.
    case winogradF4x4
    /// 3×3 stride 1 by Winograd F(2×2, 3×3): ``WinogradConvolutionKernel``.
    case winogradF2x2
    /// A 1×1 convolution of a single pixel (a classifier head): ``DenseKernel``.
    case fullyConnected
    /// 5×5 stride 1 by Winograd F(2×2, 5×5): ``Winograd5x5Kernel``.
    case winograd5x5
    /// Any other ungrouped convolution: ``DirectConvolutionKernel``.
    case direct
    /// Grouped convolutions, or any when forced: im2col + OpenBLAS `sgemm` (``Im2colConvolutionKernel``).
    case im2col

    /// The Winograd 3×3 variant, for the two Winograd cases.
    var winogradVariant: WinogradVariant? {
        switch self {
        case .winogradF4x4: return .f4x4
        case .winogradF2x2: return .f2x2
        default: return nil
        }
    }
}

/// `ANVIL_CONVOLUTION`: forces the algorithm of every convolution that can take it, for
/// benchmarks and tests. Read once per process.
enum ConvolutionOverride: String, Sendable, CaseIterable {
    /// Unset: the cost model chooses.
    case auto
    /// im2col + GEMM for every convolution (no Winograd, no direct kernel).
    case im2col
    /// The direct kernel for every ungrouped convolution (no Winograd).
    case direct
    /// Winograd as the cost model chooses it (priced against im2col), never the direct kernel.
    case gemm
    /// Winograd F(2×2, 3×3) for every 3×3 stride-1 ungrouped convolution.
    case winograd2
    /// Winograd F(4×4, 3×3) for every 3×3 stride-1 ungrouped convolution.
    case winograd4

    /// The environment's value, or an error naming the variable and what it may be.
    static let environment: Result<ConvolutionOverride, AnvilError> = parse(
        Settings.current.convolution)

    /// `text` as an override (nil and empty are ``auto``), or an error listing the values.
    static func parse(_ text: String?) -> Result<ConvolutionOverride, AnvilError> {
        guard let text, !text.isEmpty else { return .success(.auto) }
        guard let value = ConvolutionOverride(rawValue: text) else {
            let values = allCases.map(\.rawValue).joined(separator: ", ")
            return .failure(AnvilError(.invalidOption, "ANVIL_CONVOLUTION=\(text) is not one of \(values)"))
        }
        return .success(value)
    }

    /// ``environment``'s value; ``auto`` when it is invalid (compile reports that as an error).
    static var current: ConvolutionOverride { (try? environment.get()) ?? .auto }
}

/// The choice itself: pure, so tests can ask it about any layer and any override.
enum ConvolutionSelection {
    /// What a megabyte of convolution weights held in memory costs, in milliseconds per image,
    /// when Winograd is weighed against the direct kernel: the direct kernel keeps the weights
    /// as they are, the Winograd filters take 16/9 (F(2×2)) or 4 (F(4×4)) times their memory,
    /// resident for as long as the model lives (the weight cache keeps them out of the load time).
    /// At 0.2 (per 10⁶ bytes) a layer takes F(4×4) where each extra megabyte buys 0.2 ms or more:
    /// ResNet-50's 28×28 128 → 128 layers and VGG16's 28×28 ones do, VGG16's 14×14 ones (21 MB
    /// more each) do not when priced as transformed filters (see ``preferredWinograd``).
    /// Winograd is priced as transformed filters even where the kernel then keeps the taps
    /// (``WinogradFilterForm``): the model does not price the taps' transform, and choices priced
    /// with the taps' memory would pick Winograd where it is slower (ResNet-50's 7×7 512 → 512
    /// layers, where the direct kernel is faster than F(2×2) from taps).
    /// `ANVIL_WINOGRAD_MS_PER_MB` sets it; 0 picks the fastest algorithm whatever its memory.
    static let millisecondsPerMegabyte: Double = Settings.current.winogradMillisecondsPerMegabyte ?? 0.2

    /// The algorithm for a convolution, in order: depthwise for one input channel per group;
    /// Winograd 3×3 where the cost model expects it to beat the kernel that would run
    /// otherwise (time plus ``millisecondsPerMegabyte`` for its memory); a fully connected
    /// kernel for a 1×1 convolution of one pixel; Winograd 5×5 for 5×5 stride-1 layers of at
    /// least 8 input channels; the direct kernel for every other ungrouped convolution; im2col
    /// + GEMM for the rest. `override` forces as its cases say.
    ///
    /// Why these rules:
    /// - Winograd 5×5 is as fast as the direct kernel or faster from 8 input channels on; with
    ///   fewer the transforms cost more than the multiplies they save.
    /// - The direct kernel is as fast as im2col + `sgemm` or faster at every size, 1×1 layers
    ///   too; spatial kernels (3×3 … 7×7, any stride) also save the im2col copy.
    static func algorithm(geometry g: WindowGeometry, inputChannels: Int, outputChannels: Int, groups: Int,
                          override: ConvolutionOverride = .current,
                          millisecondsPerMegabyte: Double = millisecondsPerMegabyte) -> ConvolutionAlgorithm {
        if groups == inputChannels && groups > 1 { return .depthwise }
        let ungrouped = groups == 1
        // What runs when Winograd does not.
        let fallback: ConvolutionAlgorithm = !ungrouped || override == .im2col || override == .gemm ? .im2col : .direct
        if WinogradConvolutionKernel.supports(geometry: g, groups: groups) {
            switch override {
            case .winograd2: return .winogradF2x2
            case .winograd4: return .winogradF4x4
            case .im2col, .direct: break
            case .auto, .gemm:
                if let variant = preferredWinograd(geometry: g, inputChannels: inputChannels, outputChannels: outputChannels,
                                                   against: fallback, millisecondsPerMegabyte: millisecondsPerMegabyte) {
                    return variant == .f4x4 ? .winogradF4x4 : .winogradF2x2
                }
            }
        }
        if ungrouped && g.isSinglePixel { return .fullyConnected }
        if ungrouped && Winograd5x5Kernel.supports(geometry: g) && inputChannels >= 8
            && override != .direct && override != .im2col && override != .gemm {
            return .winograd5x5
        }
        return fallback
    }

    /// Whether a layer whose ``algorithm(geometry:inputChannels:outputChannels:groups:override:millisecondsPerMegabyte:)``
    /// is the direct kernel runs Winograd F(4×4) on calls of many images instead
    /// (``DirectOrWinogradKernel``): a 3×3 stride-1 layer of 8 or more input channels, no
    /// override, and no fused residual (the direct kernel adds it in registers; Winograd would
    /// need it added after, and could not write over it).
    static func winogradForLargeCalls(geometry: WindowGeometry, inputChannels: Int, groups: Int, fusedResidual: Bool,
                                      override: ConvolutionOverride = .current) -> Bool {
        override == .auto && !fusedResidual && inputChannels >= 8
            && WinogradConvolutionKernel.supports(geometry: geometry, groups: groups)
    }

    /// The Winograd variant cheaper than `fallback` for this layer, or nil. Fewer than 8 input
    /// channels never take Winograd (its transforms work on vectors of 8 channels).
    ///
    /// Winograd against `fallback` is priced with the transformed filters' memory (see
    /// ``millisecondsPerMegabyte``). Between the variants, each is priced with the memory of the
    /// form it keeps (``WinogradFilterForm``): where both keep taps the faster by time alone
    /// wins (VGG16's 14×14 512 → 512 layers take F(4×4) from taps, which the transformed F(4×4)
    /// filters' 21 MB more would price out), and a variant kept as taps is not charged for
    /// filters it never makes (ResNet-50's 14×14 256 → 256 layers take F(4×4) from taps, 2.4 MB,
    /// over F(2×2) with its 4.2 MB of transformed filters).
    static func preferredWinograd(geometry: WindowGeometry, inputChannels: Int, outputChannels: Int,
                                  against fallback: ConvolutionAlgorithm,
                                  millisecondsPerMegabyte: Double) -> WinogradVariant? {
        guard inputChannels >= 8 else { return nil }
        // 1 ms per 10⁶ bytes is 1 ns per byte; per stored float (a tap of a filter or of a transformed filter):
        let perFloat = millisecondsPerMegabyte * Double(MemoryLayout<Float>.size)
        let pairs = Double(inputChannels * outputChannels)
        let alternative = ConvolutionCostModel.nanoseconds(fallback, geometry: geometry, inputChannels: inputChannels,
                                                           outputChannels: outputChannels) + perFloat * pairs * 9
        let times = WinogradVariant.allCases.map { variant in
            (variant, ConvolutionCostModel.nanoseconds(variant == .f4x4 ? .winogradF4x4 : .winogradF2x2, geometry: geometry,
                                                       inputChannels: inputChannels, outputChannels: outputChannels))
        }
        let best = times.map { ($0.0, $0.1 + perFloat * pairs * Double($0.0.positions)) }.min { $0.1 < $1.1 }!
        guard best.1 < alternative else { return nil }
        return times.map { variant, time in
            let form = WinogradFilterForm.preferred(variant: variant, geometry: geometry, inputs: inputChannels,
                                                    outputs: outputChannels)
            return (variant, time + perFloat * pairs * Double(form == .taps ? 9 : variant.positions))
        }.min { $0.1 < $1.1 }!.0
    }
}

/// A cost model of one image through each algorithm ``ConvolutionSelection`` weighs, in
/// nanoseconds on one thread, linear in counts the kernels' structure gives.
enum ConvolutionCostModel {
    /// The estimated time of `algorithm` for one image: Winograd 3×3 and what runs instead of it
    /// (the direct kernel or im2col); the other algorithms are chosen by rule, not priced.
    ///
    /// - Winograd (coefficients fitted with OpenBLAS GEMMs as its products; Anvil's own products
    ///   are no slower, so the fit still ranks the choices): multiply-adds with each
    ///   block's tiles rounded up to a multiple of 8, filter floats streamed once per block and
    ///   position, elements moved by the transforms (input channels past a multiple of 8 cost
    ///   extra), a fixed cost per position.
    /// - The direct kernel: multiply-adds of whole register tiles (6 pixels × 16 channels, the
    ///   tile of the fit; the AVX2 body's 3 × 32 pair tile speeds up this kernel and Winograd's
    ///   products alike, so the ratio between them holds), and input and output elements; a
    ///   non-negative least-squares fit (relative error) to single-thread timings of 3×3 layers
    ///   (1×1 … 224×224, 8 … 512 channels).
    /// - im2col + GEMM (only under `ANVIL_CONVOLUTION=gemm`, and grouped layers): GEMM
    ///   multiply-adds, weights streamed once per band of rows, elements copied, a fixed cost.
    static func nanoseconds(_ algorithm: ConvolutionAlgorithm, geometry g: WindowGeometry, inputChannels: Int,
                            outputChannels: Int) -> Double {
        let pairs = Double(inputChannels * outputChannels)
        let pixels = g.outputHeight * g.outputWidth
        switch algorithm {
        case .direct:
            let tiles = (pixels + 5) / 6 * 6, blocks = (outputChannels + 15) / 16 * 16
            let macs = Double(tiles * g.kernelHeight * g.kernelWidth * inputChannels * blocks)
            return 0.02558 * macs + 0.4155 * Double(pixels * (inputChannels + outputChannels))
        case .im2col:
            let depth = g.kernelHeight * g.kernelWidth * inputChannels
            let rows = min(pixels, max(64, Im2colConvolutionKernel.tileBudget / depth))
            let passes = Double((pixels + rows - 1) / rows)
            let taps = Double(g.kernelHeight * g.kernelWidth)
            return 0.01942 * Double(pixels) * taps * pairs + 0.3469 * taps * pairs * passes
                + 0.5469 * Double(pixels * (depth + outputChannels)) + 269
        case .winogradF2x2, .winogradF4x4:
            let variant = algorithm.winogradVariant!
            let positions = variant.positions, (high, wide) = variant.tiles(g), tiles = high * wide
            let limit = max(WinogradConvolutionKernel.minimumBlockTiles,
                            WinogradConvolutionKernel.blockBudget / (positions * (inputChannels + outputChannels)))
            let blocks = (tiles + limit - 1) / limit
            let paddedTiles = ((tiles + blocks - 1) / blocks + 7) / 8 * 8 * blocks
            let (perMAC, perWeight, perElement, perTailElement, perPosition): (Double, Double, Double, Double, Double) =
                variant == .f4x4 ? (0.02575, 0.1201, 0.6955, 11.24, 58.56) : (0.0214, 0.1918, 0.7165, 15.75, 49.98)
            return perMAC * Double(paddedTiles * positions) * pairs + perWeight * Double(positions * blocks) * pairs
                + perElement * Double(tiles * positions * (inputChannels + outputChannels))
                + perTailElement * Double(tiles * positions * (inputChannels % 8)) + perPosition * Double(positions)
        case .depthwise, .fullyConnected, .winograd5x5:
            preconditionFailure("the cost model prices Winograd 3×3 and its alternatives, not \(algorithm)")
        }
    }
}

/// Builds the kernel for any convolution, as ``ConvolutionSelection`` chooses; throws when
/// `ANVIL_CONVOLUTION` holds no valid value. Every algorithm folds the context's affine map into
/// its weights and bias.
func makeConvolutionKernel(_ context: KernelContext, geometry: WindowGeometry, inputChannels: Int,
                           outputChannels: Int, groups: Int, useBias: Bool,
                           activation: ActivationFunction) throws -> FusedKernel {
    let override = try ConvolutionOverride.environment.get()
    let algorithm = ConvolutionSelection.algorithm(geometry: geometry, inputChannels: inputChannels,
                                                   outputChannels: outputChannels, groups: groups, override: override)
    let finalActivation = context.fusedActivation ?? activation
    guard context.fusedResidual else {
        return FusedKernel(try makeConvolutionKernel(context, algorithm, geometry: geometry, inputChannels: inputChannels,
                                                     outputChannels: outputChannels, groups: groups, useBias: useBias,
                                                     finalActivation: finalActivation),
                           appliesFoldedAffine: true)
    }
    // A fused residual: the direct kernel adds it in registers; any other is wrapped.
    let kernel = try makeConvolutionKernel(context, algorithm, geometry: geometry, inputChannels: inputChannels,
                                           outputChannels: outputChannels, groups: groups, useBias: useBias,
                                           finalActivation: .none)
    if var direct = kernel as? DirectConvolutionKernel {
        direct.activation = finalActivation
        return FusedKernel(direct, appliesFoldedAffine: true)
    }
    return FusedKernel(EpilogueKernel(inner: kernel, affine: nil, addsSecondInput: true, activation: finalActivation),
                       appliesFoldedAffine: true)
}

/// Builds the kernel of `algorithm` with the activation already resolved.
private func makeConvolutionKernel(_ context: KernelContext, _ algorithm: ConvolutionAlgorithm, geometry: WindowGeometry,
                                   inputChannels: Int, outputChannels: Int, groups: Int, useBias: Bool,
                                   finalActivation: ActivationFunction) throws -> any Kernel {
    let raw = try context.parameter(.weights)
    let bias = useBias ? try context.parameter(.biases) : nil
    // Everything made from the weights goes through `sharedAcrossSizes`: an open model's kernels
    // for every input size share one copy per algorithm (a fixed-size model just makes it).
    let affine = context.foldedAffine
    if algorithm == .depthwise {
        let weights = context.sharedAcrossSizes("depthwise") {
            let reordered = WeightReorder.depthwise(raw.buffer, layout: context.layout, channels: outputChannels,
                                                    kernelHeight: geometry.kernelHeight, kernelWidth: geometry.kernelWidth)
            return KernelWeights(source: raw, reordered: reordered, bias: bias, outputs: outputChannels,
                                 weightsPerOutput: geometry.kernelHeight * geometry.kernelWidth,
                                 rowStride: outputChannels, affine: affine)
        }
        raw.releaseMappedPages()  // always reordered into a copy
        return DepthwiseConvolutionKernel(geometry: geometry, inputChannels: inputChannels,
                                          multiplier: outputChannels / inputChannels, weights: weights,
                                          activation: finalActivation)
    }
    if let variant = algorithm.winogradVariant {
        // The filter transform reads the weights in their own layout and applies a folded
        // BatchNormalization's scale itself: no reordered or scaled copy.
        let form = WinogradFilterForm.preferred(variant: variant, geometry: geometry, inputs: inputChannels,
                                                 outputs: outputChannels)
        let (filters, foldedBias) = context.sharedAcrossSizes("winograd-\(variant.rawValue)") {
            (WinogradConvolutionKernel.makeFilters(variant: variant, form: form, weights: raw, layout: context.layout,
                                                   scale: affine?.scale, inputChannels: inputChannels,
                                                   outputChannels: outputChannels, cache: context.weightCache),
             KernelWeights.foldedBias(bias, affine: affine, outputs: outputChannels))
        }
        let kernel = WinogradConvolutionKernel(
            variant: variant, geometry: geometry, inputChannels: inputChannels, outputChannels: outputChannels,
            weights: raw, layout: context.layout, scale: affine?.scale, bias: foldedBias, activation: finalActivation,
            transformed: filters)
        // Only the transformed filters are used from here on; mapped weights need not stay resident.
        raw.releaseMappedPages()
        return kernel
    }
    let groupInputs = inputChannels / groups
    // The weights reordered to the kernels' layout (with the affine map folded in). Kernels that
    // read only something made from them (the direct kernel's packing, Winograd 5×5's filters)
    // make them inside that value's shared closure, so an open model keeps only what runs, not
    // the reordered copy beside it.
    func reorderedWeights() -> KernelWeights {
        let reordered = WeightReorder.convolution(raw.buffer, layout: context.layout, outputs: outputChannels,
                                                  kernelHeight: geometry.kernelHeight, kernelWidth: geometry.kernelWidth,
                                                  inputs: groupInputs)
        return KernelWeights(source: raw, reordered: reordered, bias: bias, outputs: outputChannels,
                             weightsPerOutput: geometry.kernelHeight * geometry.kernelWidth * groupInputs,
                             affine: affine)
    }
    if algorithm == .winograd5x5 {
        let (filters, filterBias) = context.sharedAcrossSizes("winograd5x5") {
            let weights = reorderedWeights()
            return (Winograd5x5Kernel.transformFilters(weights, inputChannels: inputChannels, outputChannels: outputChannels),
                    weights.bias)
        }
        raw.releaseMappedPages()  // only the transformed filters are used
        return Winograd5x5Kernel(geometry: geometry, inputChannels: inputChannels, outputChannels: outputChannels,
                                 filters: filters, bias: filterBias, activation: finalActivation)
    }
    if algorithm == .direct {
        let (packed, packedBias) = context.sharedAcrossSizes("direct") {
            let weights = reorderedWeights()
            return (DirectConvolutionKernel.pack(weights.weights, outputs: outputChannels,
                                                 depth: geometry.kernelHeight * geometry.kernelWidth * inputChannels),
                    weights.bias)
        }
        raw.releaseMappedPages()  // only the packed copy is used
        let direct = DirectConvolutionKernel(geometry: geometry, inputChannels: inputChannels, outputChannels: outputChannels,
                                             packed: packed, bias: packedBias, activation: finalActivation)
        if ConvolutionSelection.winogradForLargeCalls(geometry: geometry, inputChannels: inputChannels, groups: groups,
                                                      fusedResidual: context.fusedResidual) {
            return DirectOrWinogradKernel(direct: direct)
        }
        return direct
    }
    let weights = context.sharedAcrossSizes("weights") { reorderedWeights() }
    if weights.weights.buffer.baseAddress != raw.buffer.baseAddress { raw.releaseMappedPages() }  // a copy is used
    if algorithm == .fullyConnected {
        // One pixel in, one out (a classifier head on pooled features): a fully connected
        // layer, whose kernel reads several weight rows at once (the direct kernel would stream
        // one 64-byte column at a time).
        // Small batches read `weights` in place, so mapped weights stay.
        return DenseKernel(inputs: inputChannels, outputs: outputChannels, weights: weights,
                           activation: finalActivation, channelsFirstInput: nil)
    }
    return Im2colConvolutionKernel(geometry: geometry, inputChannels: inputChannels, outputChannels: outputChannels,
                             groups: groups, weights: weights, activation: finalActivation)
}
