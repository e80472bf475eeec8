/// Splits a tensor along one axis into consecutive parts (ONNX `Split`, `torch.split`): DSL sugar
/// that applies one ``Slice`` per part, so each part is an ordinary tensor.
///
/// ```swift
/// let halves = x --> Split(axis: -1, sizes: [32, 32])   // [SymbolicTensor], 2 parts
/// ```
public struct Split: Sendable {
    /// The axis to split (negative counts from the end; the batch axis 0 cannot be split).
    public let axis: Int
    /// The extent of each part along `axis`; they must add up to the axis' extent.
    public let sizes: [Int]
    /// The stem of the parts' names (`<name>_1`, `<name>_2`, ...), or `nil` for automatic ones.
    public let name: String?

    /// Creates the split.
    public init(axis: Int, sizes: [Int], name: String? = nil) {
        self.axis = axis
        self.sizes = sizes
        self.name = name
    }

    /// One ``Slice`` per part.
    public var slices: [Slice] {
        var start = 0
        return sizes.enumerated().map { i, size in
            defer { start += size }
            return Slice(axis: axis, start: start, end: start + size, name: name.map { "\($0)_\(i + 1)" })
        }
    }
}

/// Applies `split` to `tensor`: one tensor per part (shapes are checked when the model is built).
public func --> (tensor: SymbolicTensor, split: Split) -> [SymbolicTensor] {
    split.slices.map { tensor --> $0 }
}
