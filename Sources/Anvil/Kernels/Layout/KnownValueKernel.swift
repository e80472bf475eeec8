/// Writes a value known when the plan was built (a shape computation such as a grid of anchor
/// points made from the input size) into its buffer, once per item of the batch, for the
/// layers that read it at `predict`.
struct KnownValueKernel: Kernel {
    /// One item's elements.
    let values: ParameterData

    init(values: [Float]) {
        self.values = ParameterData(values.isEmpty ? [0] : values)
    }

    func run(_ io: KernelIO) {
        let count = io.outputShape.count
        guard count > 0 else { return }
        let source = values.buffer.baseAddress!
        for item in 0 ..< io.batch { (io.output + item * count).update(from: source, count: count) }
    }
}
