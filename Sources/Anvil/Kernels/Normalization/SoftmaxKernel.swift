import Foundation

/// Softmax (or log-softmax) over the channels of each pixel, shifted by the maximum for
/// numerical stability.
struct SoftmaxKernel: RangeKernel {
    let channels: Int
    let pixelsPerImage: Int
    let logarithm: Bool

    func run(_ io: KernelIO) {
        let rows = io.batch * pixelsPerImage
        Compute.parallelFor(rows, costPerItem: channels * 8, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let input = io.inputs[0]
        for row in range {
            let source = input + row * channels
            let out = io.output + row * channels
            var largest = -Float.infinity
            for c in 0 ..< channels { largest = max(largest, source[c]) }
            var sum: Float = 0
            for c in 0 ..< channels {
                let e = Foundation.exp(source[c] - largest)
                out[c] = e
                sum += e
            }
            if logarithm {
                let logSum = Foundation.log(sum)
                for c in 0 ..< channels { out[c] = source[c] - largest - logSum }
            } else {
                let scale = 1 / sum
                for c in 0 ..< channels { out[c] *= scale }
            }
        }
    }
}
