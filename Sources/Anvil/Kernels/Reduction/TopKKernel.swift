/// A ``TopK`` layer's kernel: for each position across the axis, the axis's values gathered and
/// ordered by (value, position) — a partial sort when k is small against the extent; split over
/// the worker pool by outer blocks.
struct TopKKernel: RangeKernel {
    let span: AxisSpan
    let k: Int
    let largest: Bool
    /// Whether the positions are written (else the values).
    let indices: Bool

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * span.outer, costPerItem: max(1, span.extent * span.inner), KernelRange(kernel: self, io: io))
    }

    /// Whether (a, i) comes before (b, j): the better value, NaN best, then the lower position.
    @inline(__always)
    private func before(_ a: Float, _ i: Int, _ b: Float, _ j: Int) -> Bool {
        if a.isNaN || b.isNaN { return a.isNaN && (!b.isNaN || i < j) }
        if a != b { return largest ? a > b : a < b }
        return i < j
    }

    func run(_ range: Range<Int>, _ io: KernelIO) {
        let (extent, inner) = (span.extent, span.inner)
        var order = [Int](repeating: 0, count: extent)
        for block in range {
            let input = io.inputs[0] + block * extent * inner, output = io.output + block * k * inner
            for j in 0 ..< inner {
                for p in 0 ..< extent { order[p] = p }
                if k > 16 {
                    // A full sort beats k selection passes (the comparison orders ties by position).
                    order.sort { before(input[$0 * inner + j], $0, input[$1 * inner + j], $1) }
                    for slot in 0 ..< k { output[slot * inner + j] = indices ? Float(order[slot]) : input[order[slot] * inner + j] }
                    continue
                }
                // Selection of the first k (stable by position through the comparison).
                for slot in 0 ..< k {
                    var best = slot
                    for p in slot + 1 ..< extent where before(input[order[p] * inner + j], order[p], input[order[best] * inner + j], order[best]) {
                        best = p
                    }
                    order.swapAt(slot, best)
                    output[slot * inner + j] = indices ? Float(order[slot]) : input[order[slot] * inner + j]
                }
            }
        }
    }
}
