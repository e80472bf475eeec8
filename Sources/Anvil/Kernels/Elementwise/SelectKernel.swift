/// A ``Select`` layer's kernel: each output value reads its condition, x and y through
/// positions broadcast once when the kernel is made; split over the worker pool by rows of
/// 4096 outputs.
struct SelectKernel: RangeKernel {
    /// For each operand (condition, x, y), the position of each output value of an item.
    let positions: [[Int32]]
    /// Each operand's values per item (0 for the constant: every item reads the same).
    let itemCounts: [Int]
    /// Which operand is the constant, if any.
    let constantPosition: Int?
    let constant: [Float]

    static let rowLength = 4096

    private var outputCount: Int { positions[0].count }
    private var rowsPerItem: Int { (outputCount + Self.rowLength - 1) / Self.rowLength }

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * rowsPerItem, costPerItem: Self.rowLength, KernelRange(kernel: self, io: io))
    }

    func run(_ range: Range<Int>, _ io: KernelIO) {
        let perItem = rowsPerItem, count = outputCount
        constant.withUnsafeBufferPointer { constant in
            for row in range {
                let item = row / perItem, start = (row % perItem) * Self.rowLength
                // The operands' item bases, without an array (nothing allocates while predicting).
                var next = 0
                func base(_ k: Int) -> UnsafePointer<Float> {
                    if k == constantPosition { return constant.baseAddress ?? UnsafePointer(io.output) }
                    defer { next += 1 }
                    return io.inputs[next] + item * itemCounts[k]
                }
                let (condition, x, y) = (base(0), base(1), base(2))
                let output = io.output + item * count
                for j in start ..< min(start + Self.rowLength, count) {
                    output[j] = condition[Int(positions[0][j])] != 0 ? x[Int(positions[1][j])] : y[Int(positions[2][j])]
                }
            }
        }
    }
}
