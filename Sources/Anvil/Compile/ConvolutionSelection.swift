/// Builds the kernel for any convolution: depthwise when each group has one input channel,
/// Winograd for 3×3 stride-1 ungrouped ones where its cost model expects it to be faster
/// (``WinogradConvolutionKernel/preferredVariant(geometry:inputChannels:outputChannels:groups:)``),
/// a fully connected kernel for a 1×1 convolution of one pixel, Winograd F(2×2, 5×5) for
/// 5×5 stride-1 ones (``Winograd5x5Kernel/isPreferred(geometry:inputChannels:)``), then the
/// direct kernel for every other ungrouped convolution (``DirectConvolutionKernel/isPreferred``:
/// unless `ANVIL_CONVOLUTION` says otherwise), otherwise im2col + GEMM.
func makeConvolutionKernel(_ context: KernelContext, geometry: WindowGeometry, inputChannels: Int,
                           outputChannels: Int, groups: Int, useBias: Bool,
                           activation: ActivationFunction) throws -> any Kernel {
    let finalActivation = context.fusedActivation ?? activation
    guard context.fusedResidual else {
        return try makeConvolutionKernel(context, geometry: geometry, inputChannels: inputChannels,
                                         outputChannels: outputChannels, groups: groups, useBias: useBias,
                                         finalActivation: finalActivation)
    }
    // A fused residual: the direct kernel adds it in registers; any other is wrapped.
    let kernel = try makeConvolutionKernel(context, geometry: geometry, inputChannels: inputChannels,
                                           outputChannels: outputChannels, groups: groups, useBias: useBias,
                                           finalActivation: .none)
    if var direct = kernel as? DirectConvolutionKernel {
        direct.activation = finalActivation
        return direct
    }
    return ResidualKernel(inner: kernel, activation: finalActivation)
}

/// ``makeConvolutionKernel(_:geometry:inputChannels:outputChannels:groups:useBias:activation:)``
/// with the activation already resolved.
private func makeConvolutionKernel(_ context: KernelContext, geometry: WindowGeometry, inputChannels: Int,
                                   outputChannels: Int, groups: Int, useBias: Bool,
                                   finalActivation: ActivationFunction) throws -> any Kernel {
    let raw = try context.parameter(.weights)
    let bias = useBias ? try context.parameter(.biases) : nil
    if groups == inputChannels && groups > 1 {
        let reordered = WeightReorder.depthwise(raw.buffer, layout: context.layout, channels: outputChannels,
                                                kernelHeight: geometry.kernelHeight, kernelWidth: geometry.kernelWidth)
        let weights = KernelWeights(source: raw, reordered: reordered, bias: bias, outputs: outputChannels,
                                    weightsPerOutput: geometry.kernelHeight * geometry.kernelWidth,
                                    rowStride: outputChannels, affine: context.foldedAffine)
        raw.releaseMappedPages()  // always reordered into a copy
        return DepthwiseConvolutionKernel(geometry: geometry, inputChannels: inputChannels,
                                          multiplier: outputChannels / inputChannels, weights: weights,
                                          activation: finalActivation)
    }
    let forcedDirect = groups == 1 && DirectConvolutionKernel.override == "direct"
    if !forcedDirect, let variant = WinogradConvolutionKernel.preferredVariant(
        geometry: geometry, inputChannels: inputChannels, outputChannels: outputChannels, groups: groups) {
        // The filter transform reads the weights in their own layout and applies a folded
        // BatchNormalization's scale itself: no reordered or scaled copy.
        let kernel = WinogradConvolutionKernel(
            variant: variant, geometry: geometry, inputChannels: inputChannels, outputChannels: outputChannels,
            weights: raw, layout: context.layout, scale: context.foldedAffine?.scale,
            bias: KernelWeights.foldedBias(bias, affine: context.foldedAffine, outputs: outputChannels),
            activation: finalActivation)
        // Only the transformed filters are used from here on; mapped weights need not stay resident.
        raw.releaseMappedPages()
        return kernel
    }
    let groupInputs = inputChannels / groups
    let reordered = WeightReorder.convolution(raw.buffer, layout: context.layout, outputs: outputChannels,
                                              kernelHeight: geometry.kernelHeight, kernelWidth: geometry.kernelWidth,
                                              inputs: groupInputs)
    let weights = KernelWeights(source: raw, reordered: reordered, bias: bias, outputs: outputChannels,
                                weightsPerOutput: geometry.kernelHeight * geometry.kernelWidth * groupInputs,
                                affine: context.foldedAffine)
    if weights.weights.buffer.baseAddress != raw.buffer.baseAddress { raw.releaseMappedPages() }  // a copy is used
    if groups == 1 && geometry.isSinglePixel {
        // One pixel in, one out (a classifier head on pooled features): a fully connected
        // layer, whose kernel reads several weight rows at once (MobileNet's 1024 → 1000 head
        // 0.33 → 0.2 ms at batch 1: the direct kernel streams one 64-byte column at a time).
        // Small batches read `weights` in place, so mapped weights stay.
        return DenseKernel(inputs: inputChannels, outputs: outputChannels, weights: weights,
                           activation: finalActivation, channelsFirstInput: nil)
    }
    if groups == 1 && Winograd5x5Kernel.isPreferred(geometry: geometry, inputChannels: inputChannels) {
        let kernel = Winograd5x5Kernel(geometry: geometry, inputChannels: inputChannels,
                                       outputChannels: outputChannels, weights: weights, activation: finalActivation)
        raw.releaseMappedPages()  // only the transformed filters are used
        return kernel
    }
    if groups == 1 && DirectConvolutionKernel.isPreferred {
        let kernel = DirectConvolutionKernel(geometry: geometry, inputChannels: inputChannels,
                                             outputChannels: outputChannels, weights: weights, activation: finalActivation)
        raw.releaseMappedPages()  // only the packed copy is used
        return kernel
    }
    return ConvolutionKernel(geometry: geometry, inputChannels: inputChannels, outputChannels: outputChannels,
                             groups: groups, weights: weights, activation: finalActivation)
}
