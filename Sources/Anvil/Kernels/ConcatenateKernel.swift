/// Concatenates inputs along channels, pixel by pixel.
struct ConcatenateKernel: Kernel {
    let channels: [Int]
    let pixelsPerImage: Int

    func run(_ io: KernelIO) {
        let total = channels.reduce(0, +)
        let rows = io.batch * pixelsPerImage
        Compute.parallelFor(rows, costPerItem: total) { range in
            for row in range {
                var out = io.output + row * total
                for (index, count) in channels.enumerated() {
                    out.update(from: io.inputs[index] + row * count, count: count)
                    out += count
                }
            }
        }
    }
}
