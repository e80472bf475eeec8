/// The body of a parallel loop: a value holding what the loop reads and writes, run by
/// ``Compute/parallelFor(_:costPerItem:_:)`` over contiguous ranges of an index range (a
/// thread's part, or a claim of it: see ``balancesParts``).
///
/// A struct rather than a closure because handing a closure to worker threads allocates a
/// context on every call; a job is passed by address and allocates nothing.
protocol ParallelJob {
    /// Runs the loop over `range`.
    func run(_ range: Range<Int>)

    /// Runs the loop over `range` as participant `participant` (0 the caller, `i` worker `i - 1`,
    /// always below ``Compute/maximumThreadCount``; 0 whenever one thread runs the job). For
    /// jobs with scratch memory per thread: a claim of any part may run on any participant, so
    /// the scratch must be the participant's, not the part's. Defaults to ``run(_:)``.
    func run(_ range: Range<Int>, participant: Int)

    /// Whether a thread that finishes its part early may take items of the others' parts that
    /// have not started: true for jobs whose items cost the same in ranges of any size (rows,
    /// pixels, tiles); false (the default) keeps each part whole, for jobs with set-up per call
    /// (a GEMM's packing). A job with scratch per thread balances too, through
    /// ``run(_:participant:)``.
    static var balancesParts: Bool { get }

    /// Claims of a job that balances its parts are whole multiples of this many items (default
    /// 1): for items that run best together, such as the output-channel blocks of one register tile.
    var claimMultiple: Int { get }
}

extension ParallelJob {
    static var balancesParts: Bool { false }
    var claimMultiple: Int { 1 }
    func run(_ range: Range<Int>, participant: Int) { run(range) }

    /// Runs the job stored at `address` over `range` as `participant` (how workers call a job
    /// they know only by type).
    static func run(at address: UnsafeRawPointer, _ range: Range<Int>, participant: Int) {
        address.assumingMemoryBound(to: Self.self).pointee.run(range, participant: participant)
    }
}

/// The job a worker holds when there is none.
struct NoJob: ParallelJob {
    func run(_ range: Range<Int>) {}
}
