/// A ``Cast`` of a computed tensor to a type whose values the input's do not all belong to: each
/// element as ``ElementType/converting(_:)`` makes it (an integer type truncates toward zero
/// and wraps, `bool` is 1 where non-zero).
struct ConversionKernel: ElementMapKernel {
    /// The type converted to.
    let type: ElementType
    /// Elements per item.
    let count: Int

    /// Converts `count` elements.
    func map(_ input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int) {
        Self.convert(input, into: output, count: count, to: type)
    }

    /// Writes `count` elements of `input` into `output` (which may be `input`) as `type` holds them.
    static func convert(_ input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, to type: ElementType) {
        for i in 0 ..< count { output[i] = Float(type.converting(Double(input[i]))) }
    }
}
