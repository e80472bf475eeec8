/// The part of a fused epilogue a layer's kernel did not apply itself, applied by the compiler
/// right after it in one pass over the output: a per-channel affine map (a folded
/// BatchNormalization), then the second input (a residual), then the activation. It is also
/// how a fused residual `Add` reaches a convolution kernel that cannot add it in registers
/// (all but the direct kernel): what the `Add` step would have done, minus a read of the
/// layer's output.
struct EpilogueKernel: RangeKernel {
    let inner: any Kernel
    /// `y = scale[c] * y + shift[c]`, or `nil`.
    let affine: (scale: [Float], shift: [Float])?
    /// Whether to add the second input.
    let addsSecondInput: Bool
    let activation: ActivationFunction

    func scratchCount(batch: Int) -> Int { inner.scratchCount(batch: batch) }

    func run(_ io: KernelIO) {
        // The inner kernels read only their first input, so `io` goes as it is: a copy with one
        // input would allocate its arrays on every run.
        inner.run(io)
        Compute.parallelFor(io.batch * io.outputShape.count, costPerItem: 3, KernelRange(kernel: self, io: io))
    }

    /// Finishes the output over `range`.
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let out = io.output + range.lowerBound
        if let affine {
            let channels = io.outputShape.channels
            for i in 0 ..< range.count {
                let c = (range.lowerBound + i) % channels
                out[i] = affine.scale[c] * out[i] + affine.shift[c]
            }
        }
        if addsSecondInput {
            let residual = io.inputs[1] + range.lowerBound
            for i in 0 ..< range.count { out[i] += residual[i] }
        }
        activation.apply(out, count: range.count)
    }
}
