/// Bilinear resampling with precomputed source indices and weights per output row and column.
struct ResizeKernel: RangeKernel {
    /// For each output coordinate: the two source coordinates and the weight of the second.
    struct Taps: Sendable {
        var low: [Int], high: [Int], weight: [Float]
    }

    let input: Shape
    let output: Shape
    let rows: Taps
    let columns: Taps

    func run(_ io: KernelIO) {
        let c = input.channels
        let lines = io.batch * output.height
        Compute.parallelFor(lines, costPerItem: output.width * c * 4, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let c = input.channels
        let source = io.inputs[0]
        for line in range {
            let image = line / output.height
            let oy = line - image * output.height
            let base = source + image * input.count
            let top = base + rows.low[oy] * input.width * c, bottom = base + rows.high[oy] * input.width * c
            let wy = rows.weight[oy]
            for ox in 0 ..< output.width {
                let x0 = columns.low[ox] * c, x1 = columns.high[ox] * c
                let wx = columns.weight[ox]
                let out = io.output + (line * output.width + ox) * c
                for k in 0 ..< c {
                    let upper = top[x0 + k] + (top[x1 + k] - top[x0 + k]) * wx
                    let lower = bottom[x0 + k] + (bottom[x1 + k] - bottom[x0 + k]) * wx
                    out[k] = upper + (lower - upper) * wy
                }
            }
        }
    }
}
