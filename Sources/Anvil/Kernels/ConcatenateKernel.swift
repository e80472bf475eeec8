/// Concatenates inputs along channels, pixel by pixel.
struct ConcatenateKernel: RangeKernel {
    let channels: [Int]
    let pixelsPerImage: Int

    func run(_ io: KernelIO) {
        let total = channels.reduce(0, +)
        let rows = io.batch * pixelsPerImage
        Compute.parallelFor(rows, costPerItem: total, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let total = channels.reduce(0, +)
        for row in range {
            var out = io.output + row * total
            for (index, count) in channels.enumerated() {
                out.update(from: io.inputs[index] + row * count, count: count)
                out += count
            }
        }
    }
}
