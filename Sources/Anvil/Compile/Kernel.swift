/// The compiled form of a layer: computes its output from its inputs, for a whole batch.
///
/// Kernels are built once by ``Layer/makeKernel(_:)`` and then run concurrently from
/// many threads on different buffers: `run` must not mutate shared state.
public protocol Kernel: Sendable {
    /// Floats of temporary memory `run` needs for a batch of `batch` images (default 0).
    func scratchCount(batch: Int) -> Int
    /// The position of the input whose buffer the output may be written over (default `nil`,
    /// none): `run` reads each value of that input only to compute the output value at the same
    /// index, and before it writes that value, splitting its work over threads the same way for
    /// both. When that input is read by no later step, the buffer plan gives the output its
    /// buffer (one stream through memory instead of two). A position the step does not have
    /// (a kernel that adds a second input only when given one) shares nothing.
    var inPlaceInput: Int? { get }
    /// Computes the output.
    func run(_ io: KernelIO)
}

extension Kernel {
    /// No scratch memory.
    public func scratchCount(batch: Int) -> Int { 0 }
    /// None: the output has a buffer of its own.
    public var inPlaceInput: Int? { nil }
}
