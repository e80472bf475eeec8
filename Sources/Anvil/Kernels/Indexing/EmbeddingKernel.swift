/// An ``Embedding`` layer's kernel: for each item, each block of the table before the axis and
/// each index, one row of the table copied (NaN for an index outside the axis); split over the
/// worker pool by those rows.
struct EmbeddingKernel: RangeKernel {
    /// The table, row-major.
    let table: ParameterData
    /// Elements of the table before the axis (product of its leading extents).
    let outer: Int
    /// The extent of the axis indexed.
    let extent: Int
    /// Elements after the axis: one row.
    let rowLength: Int
    /// Indices per item.
    let indexCount: Int

    private var rowsPerItem: Int { outer * indexCount }

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * rowsPerItem, costPerItem: max(rowLength, 16), KernelRange(kernel: self, io: io))
    }

    /// Copies the output rows in `range` (item, block, index in row-major order).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let source = table.buffer.baseAddress!, indices = io.inputs[0]
        for row in range {
            let item = row / rowsPerItem, within = row % rowsPerItem
            let block = within / indexCount, position = within % indexCount
            let output = io.output + row * rowLength
            let value = indices[item * indexCount + position]
            let index = value < 0 ? value + Float(extent) : value
            guard index >= 0, index < Float(extent), index == index.rounded(.towardZero) else {
                output.update(repeating: .nan, count: rowLength)
                continue
            }
            output.update(from: source + (block * extent + Int(index)) * rowLength, count: rowLength)
        }
    }
}
