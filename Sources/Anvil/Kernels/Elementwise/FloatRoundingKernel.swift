/// A ``FloatRounding`` layer's kernel: each element rounded to the format, in blocks split over
/// the worker pool (it may run in place).
struct FloatRoundingKernel: RangeKernel {
    /// The format rounded to.
    let format: FloatFormat
    /// Elements per item.
    let count: Int

    static let blockElements = 16_384

    func run(_ io: KernelIO) {
        let total = io.batch * count
        Compute.parallelFor((total + Self.blockElements - 1) / Self.blockElements, costPerItem: Self.blockElements,
                            KernelRange(kernel: self, io: io))
    }

    /// Rounds the blocks in `range`.
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let total = io.batch * count
        let start = range.lowerBound * Self.blockElements, end = min(total, range.upperBound * Self.blockElements)
        guard start < end else { return }
        let input = io.inputs[0], output = io.output
        // One loop per format, so the compiler sees a constant format inside each.
        switch format {
        case .float16: for i in start ..< end { output[i] = FloatFormat.float16.rounding(input[i]) }
        case .bfloat16: for i in start ..< end { output[i] = FloatFormat.bfloat16.rounding(input[i]) }
        }
    }
}
