/// A kernel whose work splits into independent ranges of rows, run in parallel by
/// ``Compute/parallelFor(_:costPerItem:_:)`` through ``KernelRange``.
protocol RangeKernel: Kernel {
    /// Computes the rows in `range` of the output of `io`.
    func run(_ range: Range<Int>, _ io: KernelIO)
}

/// A kernel's rows as a parallel job.
struct KernelRange<K: RangeKernel>: ParallelJob {
    /// Rows cost the same in ranges of any size.
    static var balancesParts: Bool { true }

    let kernel: K
    let io: KernelIO

    func run(_ range: Range<Int>) { kernel.run(range, io) }
}
