/// A kernel that maps each element of its one input to one element of its output, independently
/// (a conversion, a rounding): the batch's elements in blocks split over the worker pool. It may
/// run in place. A conforming kernel says how it maps a stretch of elements; the split is here.
protocol ElementMapKernel: RangeKernel {
    /// Elements per item.
    var count: Int { get }
    /// Writes the mapping of `count` elements of `input` into `output` (which may be `input`).
    func map(_ input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int)
}

/// Elements per block: enough to outweigh a worker's start-up.
private let elementMapBlock = 16_384

extension ElementMapKernel {
    /// Maps the batch's elements, block by block over the worker pool.
    func run(_ io: KernelIO) {
        let total = io.batch * count
        Compute.parallelFor((total + elementMapBlock - 1) / elementMapBlock, costPerItem: elementMapBlock,
                            KernelRange(kernel: self, io: io))
    }

    /// Maps the blocks in `range`.
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let total = io.batch * count
        let start = range.lowerBound * elementMapBlock, end = min(total, range.upperBound * elementMapBlock)
        guard start < end else { return }
        map(io.inputs[0] + start, into: io.output + start, count: end - start)
    }
}
