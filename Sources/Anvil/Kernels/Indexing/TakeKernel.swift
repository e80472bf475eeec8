/// A ``Take`` layer's kernel: one gather per output value through the checked positions; split
/// over the worker pool by rows of 4096 outputs.
struct TakeKernel: RangeKernel {
    /// Input position of each output value of an item (−1: zero).
    let positions: [Int32]
    /// Values per input item.
    let inputCount: Int

    static let rowLength = 4096

    private var rowsPerItem: Int { (positions.count + Self.rowLength - 1) / Self.rowLength }

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * rowsPerItem, costPerItem: Self.rowLength, KernelRange(kernel: self, io: io))
    }

    func run(_ range: Range<Int>, _ io: KernelIO) {
        let perItem = rowsPerItem, outputCount = positions.count
        positions.withUnsafeBufferPointer { positions in
            for row in range {
                let item = row / perItem, start = (row % perItem) * Self.rowLength
                let input = io.inputs[0] + item * inputCount, output = io.output + item * outputCount
                for j in start ..< min(start + Self.rowLength, outputCount) {
                    let p = Int(positions[j])
                    output[j] = p < 0 ? 0 : input[p]
                }
            }
        }
    }
}
