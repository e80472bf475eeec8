/// A fused residual connection for a layer whose kernel cannot add it itself: runs `inner`
/// (built without an activation) on the first input, then adds the second input to its output
/// and applies the activation, in one pass — what the `Add` step would have done, minus a read
/// of the layer's output. The direct convolution kernel adds the residual in registers instead.
struct ResidualKernel: RangeKernel {
    let inner: any Kernel
    let activation: ActivationFunction

    func scratchCount(batch: Int) -> Int { inner.scratchCount(batch: batch) }

    func run(_ io: KernelIO) {
        // The convolution kernels read only their first input, so `io` goes as it is: a copy
        // with one input would allocate its arrays on every run.
        inner.run(io)
        Compute.parallelFor(io.batch * io.outputShape.count, costPerItem: 2, KernelRange(kernel: self, io: io))
    }

    /// `output = activation(output + residual)` over `range`.
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let out = io.output + range.lowerBound, residual = io.inputs[1] + range.lowerBound
        for i in 0 ..< range.count { out[i] += residual[i] }
        activation.apply(out, count: range.count)
    }
}
