/// Element-wise sum of two or more inputs, then an activation.
struct AddKernel: RangeKernel {
    let count: Int
    let activation: ActivationFunction

    func run(_ io: KernelIO) {
        let total = io.batch * count
        Compute.parallelFor(total, costPerItem: io.inputs.count, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let out = io.output + range.lowerBound
        let first = io.inputs[0] + range.lowerBound, second = io.inputs[1] + range.lowerBound
        for i in 0 ..< range.count { out[i] = first[i] + second[i] }
        for input in io.inputs.dropFirst(2) {
            let source = input + range.lowerBound
            for i in 0 ..< range.count { out[i] += source[i] }
        }
        activation.apply(out, count: range.count)
    }
}
