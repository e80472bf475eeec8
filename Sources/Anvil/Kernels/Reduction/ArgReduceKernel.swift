/// An ``ArgReduce`` layer's kernel: for each output value, one pass along the axis (stride
/// `inner`), keeping the best position; split over the worker pool by outer blocks.
struct ArgReduceKernel: RangeKernel {
    let span: AxisSpan
    /// Whether the largest value wins (else the smallest).
    let largest: Bool
    /// Whether ties go to the last position.
    let last: Bool

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * span.outer, costPerItem: max(1, span.extent * span.inner), KernelRange(kernel: self, io: io))
    }

    func run(_ range: Range<Int>, _ io: KernelIO) {
        let (extent, inner) = (span.extent, span.inner)
        for block in range {
            let input = io.inputs[0] + block * extent * inner, output = io.output + block * inner
            for j in 0 ..< inner {
                var best = input[j], position = 0
                for k in 1 ..< max(extent, 1) {
                    let x = input[k * inner + j]
                    if best.isNaN { if last && x.isNaN { position = k }; continue }
                    let better = x.isNaN || (largest ? (last ? x >= best : x > best) : (last ? x <= best : x < best))
                    if better {
                        best = x
                        position = k
                    }
                }
                output[j] = Float(position)
            }
        }
    }
}
