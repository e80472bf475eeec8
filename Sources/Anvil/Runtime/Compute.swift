import COpenBLAS
import Foundation
import Synchronization

/// The compute settings Anvil and OpenBLAS share.
public enum Compute {
    /// The current ``threadCount``. Atomic because it may be set while other threads' parallel
    /// loops read it; the loads are relaxed: nothing else is published through it, and a loop
    /// that reads the old or the new count splits its work correctly either way.
    private static let threads = Atomic<Int>({
        // OpenBLAS stays single-threaded; Anvil splits the work (see `Gemm`).
        let cores = max(1, Int(openblas_get_num_threads()))
        openblas_set_num_threads(1)
        return cores
    }())

    /// Workers for Anvil's loops: one fewer than the cores (the caller is the other), created once.
    private static let pool = WorkerPool(workers: max(0, Int(openblas_get_num_procs()) - 1))

    /// Threads for everything Anvil computes: its GEMMs (OpenBLAS called single-threaded on
    /// bands of rows, one per thread) and its own loops (im2col, pooling, epilogues) share one
    /// pool, so nothing oversubscribes the cores. Process-wide; defaults to the number of cores
    /// OpenBLAS sees (`OPENBLAS_NUM_THREADS` lowers it). At most the number of cores is used.
    public static var threadCount: Int {
        get { threads.load(ordering: .relaxed) }
        set { threads.store(max(1, min(newValue, pool.workers + 1)), ordering: .relaxed) }
    }

    /// How long Anvil's worker threads wait for the next parallel loop, yielding the CPU to any
    /// other runnable thread, before they sleep: 30 ms by default, or `ANVIL_WORKER_IDLE_MS`;
    /// 0 sleeps as soon as the brief spin on the spin-wait hint has passed. Process-wide.
    ///
    /// A worker that has slept is slow to come back on a VM, whose host must run its virtual CPU
    /// again: a prediction then runs its first loops on the caller alone. Workers that wait out
    /// the gap between predictions a few tens of milliseconds apart keep those predictions as
    /// fast as back-to-back ones (ONNX Runtime's pool likewise keeps its worker running for a
    /// while after a run). Lower it where idle CPU time matters more than the latency of
    /// predictions that come now and then.
    public static var workerIdleMilliseconds: Double {
        get { Double(idleNanoseconds.load(ordering: .relaxed)) / 1e6 }
        set { idleNanoseconds.store(Int(max(0, min(newValue, 60_000)) * 1e6), ordering: .relaxed) }
    }

    /// ``workerIdleMilliseconds`` in nanoseconds, as the workers read it.
    static var workerIdleNanoseconds: Int { idleNanoseconds.load(ordering: .relaxed) }

    private static let idleNanoseconds = Atomic<Int>(Int(min(Settings.current.workerIdleMilliseconds ?? 30, 60_000) * 1e6))

    /// The most threads ``threadCount`` can be set to: kernels with per-thread scratch memory
    /// reserve this many slots.
    static var maximumThreadCount: Int { pool.workers + 1 }

    /// How many parts to split `count` items of `costPerItem` work into: one per thread, but
    /// only when each part gets enough work (about 16k multiply-adds) to pay for waking a thread.
    @inline(__always)
    static func parts(_ count: Int, costPerItem: Int) -> Int {
        min(threads.load(ordering: .relaxed), count, max(1, count &* costPerItem / 16_384))
    }

    /// Runs `job` over `0..<count`, split into at most `threadCount` contiguous ranges that
    /// run in parallel when the work is large enough. A job that ``ParallelJob/balancesParts``
    /// has its parts taken in ``claimsPerPart`` claims (of at least ``minimumClaimCost``, whole
    /// multiples of its ``ParallelJob/claimMultiple``), so a thread that finishes first takes
    /// over the rest of another's. Allocates nothing.
    @inline(__always)
    static func parallelFor<Job: ParallelJob>(_ count: Int, costPerItem: Int = 1, _ job: Job) {
        let parts = parts(count, costPerItem: costPerItem)
        if parts <= 1 {
            if count > 0 { job.run(0 ..< count, participant: 0) }
            return
        }
        let part = (count + parts - 1) / parts
        var claim = part
        if Job.balancesParts {
            let multiple = max(1, job.claimMultiple)
            let least = max((part + claimsPerPart - 1) / claimsPerPart, minimumClaimCost / max(1, costPerItem))
            claim = min(part, (least + multiple - 1) / multiple * multiple)
        }
        pool.run(job, count: count, parts: parts, claim: claim)
    }

    /// Claims per thread's part for jobs that balance their parts: the most a thread can be left
    /// waiting for at the end is one claim, 1/16 of its share.
    static let claimsPerPart = 16

    /// The least work (multiply-adds, or the job's own unit of `costPerItem`) a claim takes, so
    /// a claim's fetch-add and call stay a small share of it.
    static let minimumClaimCost = 65_536
}
