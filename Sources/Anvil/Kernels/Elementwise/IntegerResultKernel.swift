/// A float kernel whose result has an integer type (an ``Elementwise`` or ``Reduction`` of
/// integer tensors): the kernel computes in float32, exact for integers up to 2²⁴, and its
/// output is then brought to the type — truncated toward zero (integer division), wrapped to the
/// type's width (`uint8` 23 · 23 is 17), 0 for a division by zero.
struct IntegerResultKernel: Kernel {
    /// The kernel computing in float32.
    let inner: any Kernel
    /// The output's integer type.
    let type: ElementType

    /// `kernel`, its result brought to `type` when that is an integer type (not `bool`).
    static func bringing(_ kernel: any Kernel, to type: ElementType) -> any Kernel {
        type.isInteger && type != .bool ? IntegerResultKernel(inner: kernel, type: type) : kernel
    }

    func scratchCount(batch: Int) -> Int { inner.scratchCount(batch: batch) }

    func run(_ io: KernelIO) {
        inner.run(io)
        let count = io.batch * io.outputShape.count
        ConversionKernel.convert(io.output, into: io.output, count: count, to: type)
    }
}
