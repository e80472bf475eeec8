/// Copies the input (optionally reordering `H, W, C` to `C, H, W`), then applies an activation.
struct CopyKernel: RangeKernel {
    let shape: Shape
    let channelsFirst: Bool
    let activation: ActivationFunction

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch, costPerItem: shape.count, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let count = shape.count
        let input = io.inputs[0]
        for image in range {
            let source = input + image * count
            let out = io.output + image * count
            if channelsFirst {
                let pixels = shape.height * shape.width
                for p in 0 ..< pixels { for c in 0 ..< shape.channels { out[c * pixels + p] = source[p * shape.channels + c] } }
            } else {
                out.update(from: source, count: count)
            }
            activation.apply(out, count: count)
        }
    }
}
