/// A ``Cast`` of a computed tensor to a type whose values the input's do not all belong to: each
/// element as ``ElementType/converting(_:)`` makes it (an integer type truncates toward zero
/// and wraps, `bool` is 1 where non-zero).
struct ConversionKernel: RangeKernel {
    /// The type converted to.
    let type: ElementType
    /// Elements per item.
    let count: Int

    static let blockElements = 16_384

    func run(_ io: KernelIO) {
        let total = io.batch * count
        Compute.parallelFor((total + Self.blockElements - 1) / Self.blockElements, costPerItem: Self.blockElements,
                            KernelRange(kernel: self, io: io))
    }

    /// Converts the blocks in `range`.
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let total = io.batch * count
        let start = range.lowerBound * Self.blockElements, end = min(total, range.upperBound * Self.blockElements)
        guard start < end else { return }
        Self.convert(io.inputs[0] + start, into: io.output + start, count: end - start, to: type)
    }

    /// Writes `count` elements of `input` into `output` (which may be `input`) as `type` holds them.
    static func convert(_ input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, to type: ElementType) {
        for i in 0 ..< count { output[i] = Float(type.converting(Double(input[i]))) }
    }
}
