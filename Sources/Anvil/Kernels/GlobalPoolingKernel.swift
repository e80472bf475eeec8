/// Global average or max pooling: one value per channel per image.
struct GlobalPoolingKernel: RangeKernel {
    let pixels: Int
    let channels: Int
    let average: Bool

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch, costPerItem: pixels * channels, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let input = io.inputs[0]
        for image in range {
            let out = io.output + image * channels
            let base = input + image * pixels * channels
            out.update(from: base, count: channels)
            for p in 1 ..< max(pixels, 1) {
                let source = base + p * channels
                if average {
                    for c in 0 ..< channels { out[c] += source[c] }
                } else {
                    for c in 0 ..< channels { out[c] = max(out[c], source[c]) }
                }
            }
            if average {
                let scale = 1 / Float(pixels)
                for c in 0 ..< channels { out[c] *= scale }
            }
        }
    }
}
