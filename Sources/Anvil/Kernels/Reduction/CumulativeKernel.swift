/// A ``Cumulative`` layer's kernel: each outer block runs along the axis once, a row of `inner`
/// accumulators at a time (contiguous rows, so the inner loop vectorises); split over the worker
/// pool by outer blocks. Accumulates in float32, as ONNX Runtime does.
struct CumulativeKernel: RangeKernel {
    let span: AxisSpan
    let product: Bool
    let exclusive: Bool
    let reverse: Bool

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * span.outer, costPerItem: max(1, span.extent * span.inner), KernelRange(kernel: self, io: io))
    }

    func run(_ range: Range<Int>, _ io: KernelIO) {
        let (extent, inner) = (span.extent, span.inner)
        let identity: Float = product ? 1 : 0
        for block in range {
            let input = io.inputs[0] + block * extent * inner, output = io.output + block * extent * inner
            for step in 0 ..< extent {
                let k = reverse ? extent - 1 - step : step
                let row = output + k * inner
                if step == 0 {
                    for j in 0 ..< inner { row[j] = exclusive ? identity : input[k * inner + j] }
                    continue
                }
                let previous = output + (reverse ? k + 1 : k - 1) * inner
                // Exclusive: the previous output combined with the previous input.
                let source = input + (exclusive ? (reverse ? k + 1 : k - 1) : k) * inner
                if product {
                    for j in 0 ..< inner { row[j] = previous[j] * source[j] }
                } else {
                    for j in 0 ..< inner { row[j] = previous[j] + source[j] }
                }
            }
        }
    }
}
