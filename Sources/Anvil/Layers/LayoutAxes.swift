/// Axis arithmetic shared by the layout layers (``Transpose``, ``Reshape``, ``Slice``,
/// ``Concatenate``, ...). Axes count the batch axis as 0 (see ``Shape``).
enum LayoutAxes {
    /// `axis` (negative counts from the end) as an index in `0 ..< rank`, or an `invalidOption`
    /// naming `option`. The batch axis (0) is refused unless `allowBatch`.
    static func resolve(_ axis: Int, rank: Int, option: String = "axis", allowBatch: Bool = false) throws -> Int {
        let resolved = axis < 0 ? axis + rank : axis
        guard resolved >= (allowBatch ? 0 : 1), resolved < rank else {
            throw AnvilError(.invalidOption, "\(option) \(axis) is out of range for a rank-\(rank) input (axes 1...\(rank - 1); the batch axis 0 stays in place)")
        }
        return resolved
    }
}
