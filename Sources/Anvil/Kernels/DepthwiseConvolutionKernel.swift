/// Depthwise convolution (groups = input channels, `multiplier` outputs per input channel),
/// computed directly: for each output pixel, a weighted sum of the window's pixels,
/// vectorised across channels. Weights are `[kh][kw][c·m]`.
struct DepthwiseConvolutionKernel: RangeKernel {
    let geometry: WindowGeometry
    let inputChannels: Int
    let multiplier: Int
    let weights: KernelWeights
    let activation: ActivationFunction

    func run(_ io: KernelIO) {
        let g = geometry
        let outputChannels = inputChannels * multiplier
        let lines = io.batch * g.outputHeight
        Compute.parallelFor(lines, costPerItem: g.outputWidth * outputChannels * g.kernelHeight * g.kernelWidth, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let g = geometry
        let outputChannels = inputChannels * multiplier
        let input = io.inputs[0]
        let w = weights.weightPointer
        let bias = weights.biasPointer
        for line in range {
            let image = line / g.outputHeight
            let oy = line - image * g.outputHeight
            let imageBase = input + image * g.inputHeight * g.inputWidth * inputChannels
            for ox in 0 ..< g.outputWidth {
                let out = io.output + (line * g.outputWidth + ox) * outputChannels
                if let bias { out.update(from: bias, count: outputChannels) } else { out.update(repeating: 0, count: outputChannels) }
                for ky in 0 ..< g.kernelHeight {
                    let iy = oy * g.strideHeight - g.padTop + ky * g.dilationHeight
                    if iy < 0 || iy >= g.inputHeight { continue }
                    for kx in 0 ..< g.kernelWidth {
                        let ix = ox * g.strideWidth - g.padLeft + kx * g.dilationWidth
                        if ix < 0 || ix >= g.inputWidth { continue }
                        let source = imageBase + (iy * g.inputWidth + ix) * inputChannels
                        let tap = w + (ky * g.kernelWidth + kx) * outputChannels
                        if multiplier == 1 {
                            for c in 0 ..< outputChannels { out[c] += source[c] * tap[c] }
                        } else {
                            for c in 0 ..< outputChannels { out[c] += source[c / multiplier] * tap[c] }
                        }
                    }
                }
                activation.apply(out, count: outputChannels)
            }
        }
    }
}
