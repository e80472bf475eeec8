/// The body of a parallel loop: a value holding what the loop reads and writes, run by
/// ``Compute/parallelFor(_:costPerItem:_:)`` over contiguous parts of an index range.
///
/// A struct rather than a closure because handing a closure to worker threads allocates a
/// context on every call; a job is passed by address and allocates nothing.
protocol ParallelJob {
    /// Runs the loop over `range`.
    func run(_ range: Range<Int>)
}

extension ParallelJob {
    /// Runs the job stored at `address` over `range` (how workers call a job they know only by type).
    static func run(at address: UnsafeRawPointer, _ range: Range<Int>) {
        address.assumingMemoryBound(to: Self.self).pointee.run(range)
    }
}

/// The job a worker holds when there is none.
struct NoJob: ParallelJob {
    func run(_ range: Range<Int>) {}
}
