/// The compiled form of a layer: computes its output from its inputs, for a whole batch.
///
/// Kernels are built once by ``Layer/makeKernel(_:)`` and then run concurrently from
/// many threads on different buffers: `run` must not mutate shared state.
public protocol Kernel: Sendable {
    /// Floats of temporary memory `run` needs for a batch of `batch` images (default 0).
    func scratchCount(batch: Int) -> Int
    /// Computes the output.
    func run(_ io: KernelIO)
}

extension Kernel {
    /// No scratch memory.
    public func scratchCount(batch: Int) -> Int { 0 }
}
