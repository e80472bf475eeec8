import COpenBLAS

/// The compute settings Anvil and OpenBLAS share.
public enum Compute {
    nonisolated(unsafe) private static var threads: Int = {
        let count = Int(openblas_get_num_threads())
        return max(1, count)
    }()

    /// Workers for Anvil's loops: one fewer than the cores (the caller is the other), created once.
    private static let pool = WorkerPool(workers: max(0, Int(openblas_get_num_procs()) - 1))

    /// Threads used by OpenBLAS and by Anvil's own loops (im2col, pooling, epilogues).
    /// Process-wide, because OpenBLAS's setting is; defaults to OpenBLAS's (all cores
    /// unless `OPENBLAS_NUM_THREADS` says otherwise).
    public static var threadCount: Int {
        get { threads }
        set {
            threads = max(1, newValue)
            openblas_set_num_threads(Int32(threads))
        }
    }

    /// Runs `body` over `0..<count` split into at most `threadCount` contiguous ranges,
    /// in parallel when `count * costPerItem` is large enough to pay for the threads.
    @inline(__always)
    static func parallelFor(_ count: Int, costPerItem: Int = 1, _ body: (Range<Int>) -> Void) {
        let parts = min(threads, count, max(1, count &* costPerItem / 16_384))
        if parts <= 1 {
            if count > 0 { body(0 ..< count) }
            return
        }
        pool.run(parts: parts) { part in
            body(count * part / parts ..< count * (part + 1) / parts)
        }
    }
}
