/// Copies the input (optionally reordering `H, W, C` to `C, H, W`), then applies an activation.
struct CopyKernel: RangeKernel {
    let shape: Shape
    let channelsFirst: Bool
    let activation: ActivationFunction

    /// Floats per work item of a plain copy: whole batches split across threads at batch 1
    /// too (split by image, a lone image's copy would run on one thread), each block copied and
    /// activated while in cache.
    static let blockFloats = 16_384

    func run(_ io: KernelIO) {
        if channelsFirst {
            Compute.parallelFor(io.batch, costPerItem: shape.count, KernelRange(kernel: self, io: io))
        } else {
            let total = io.batch * shape.count
            Compute.parallelFor((total + Self.blockFloats - 1) / Self.blockFloats, costPerItem: Self.blockFloats,
                                KernelRange(kernel: self, io: io))
        }
    }

    /// The loop body over `range`: images when reordering to `C, H, W`, else blocks of
    /// ``blockFloats`` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let count = shape.count
        let input = io.inputs[0]
        if !channelsFirst {
            let total = io.batch * count
            let start = range.lowerBound * Self.blockFloats, end = min(total, range.upperBound * Self.blockFloats)
            guard start < end else { return }
            (io.output + start).update(from: input + start, count: end - start)
            activation.apply(io.output + start, count: end - start)
            return
        }
        for image in range {
            let source = input + image * count
            let out = io.output + image * count
            let pixels = shape.height * shape.width
            for p in 0 ..< pixels { for c in 0 ..< shape.channels { out[c * pixels + p] = source[p * shape.channels + c] } }
            activation.apply(out, count: count)
        }
    }
}
