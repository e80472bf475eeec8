import CAnvilKernels

/// Depthwise convolution (groups = input channels, `multiplier` outputs per input channel),
/// computed directly by Anvil's C kernel (`anvil_depthwise_rows`): vectorised across
/// channels, several output pixels per register block, no bounds checks for pixels whose
/// window lies inside the image, padding never copied. Weights are `[kh][kw][c·m]`.
struct DepthwiseConvolutionKernel: RangeKernel {
    let geometry: WindowGeometry
    let inputChannels: Int
    let multiplier: Int
    let weights: KernelWeights
    let activation: ActivationFunction
    /// The C kernel's body (``InstructionSet/current`` when built); tests force each one the
    /// CPU runs, per kernel, so suites running in parallel do not race on a process-wide switch.
    var instructionSet = InstructionSet.current

    func run(_ io: KernelIO) {
        let g = geometry
        let outputChannels = inputChannels * multiplier
        let lines = io.batch * g.outputHeight
        Compute.parallelFor(lines, costPerItem: g.outputWidth * outputChannels * g.kernelHeight * g.kernelWidth, KernelRange(kernel: self, io: io))
    }

    /// Output lines `range` (`image * outputHeight + row`), one C call per image they touch.
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let g = geometry
        let outputChannels = inputChannels * multiplier
        let clamp = ActivationClamp(activation)
        var shape = anvil_depthwise_shape(
            input_height: Int32(g.inputHeight), input_width: Int32(g.inputWidth),
            channels: Int32(inputChannels), multiplier: Int32(multiplier),
            kernel_height: Int32(g.kernelHeight), kernel_width: Int32(g.kernelWidth),
            stride_height: Int32(g.strideHeight), stride_width: Int32(g.strideWidth),
            dilation_height: Int32(g.dilationHeight), dilation_width: Int32(g.dilationWidth),
            pad_top: Int32(g.padTop), pad_left: Int32(g.padLeft),
            output_height: Int32(g.outputHeight), output_width: Int32(g.outputWidth),
            clamp_min: clamp.min, clamp_max: clamp.max)
        let inputImage = g.inputHeight * g.inputWidth * inputChannels
        let outputImage = g.outputHeight * g.outputWidth * outputChannels
        let rowFloats = g.outputWidth * outputChannels
        var line = range.lowerBound
        while line < range.upperBound {
            let image = line / g.outputHeight
            let first = line - image * g.outputHeight
            let last = min(g.outputHeight, range.upperBound - image * g.outputHeight)
            let out = io.output + image * outputImage
            anvil_depthwise_rows(instructionSet.cValue, &shape, io.inputs[0] + image * inputImage, weights.weightPointer, weights.biasPointer,
                                 out, Int32(first), Int32(last))
            if clamp.rest != .none { clamp.rest.apply(out + first * rowFloats, count: (last - first) * rowFloats, instructionSet: instructionSet) }
            line = image * g.outputHeight + last
        }
    }
}
