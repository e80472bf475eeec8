/// An item's values seen along one axis: `outer` blocks, each `extent` positions of `inner`
/// contiguous values (row-major, the axis counted with the batch as 0).
struct AxisSpan: Equatable {
    let outer: Int
    let extent: Int
    let inner: Int

    /// The span of Anvil axis `axis` (1 ..< rank) of an item of `dimensions` (the axes after the batch).
    init(dimensions: [Int], axis: Int) {
        outer = dimensions[..<(axis - 1)].reduce(1, *)
        extent = dimensions[axis - 1]
        inner = dimensions[axis...].reduce(1, *)
    }

    /// Values per item.
    var count: Int { outer * extent * inner }
}
