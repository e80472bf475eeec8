#if canImport(Glibc)
import Glibc
#endif
import CAnvilKernels
import Synchronization

/// Anvil's own threads for its loops (im2col, pooling, epilogues): persistent workers that
/// spin briefly, then sleep, so a parallel loop costs microseconds and allocates nothing.
///
/// Waits (a worker for its next job, the caller for the workers) first spin on the CPU's
/// spin-wait hint for ``hintedSpins`` steps, then on `sched_yield` (so another runnable thread
/// gets the CPU); a worker sleeps once it has waited ``Compute/workerIdleMilliseconds`` for a
/// job. The hint notices a new job within tens of nanoseconds, sooner than a `sched_yield`
/// returns, which counts in networks of many small layers. A worker that slept long is slow to
/// come back on a VM, whose host must run its virtual CPU again, hence the long default (see
/// `Compute`).
///
/// Part 0 of a job starts on the caller, part `i` on worker `i - 1`; a participant that runs
/// out of its own part takes unstarted claims of the others (see `run`). The caller returns
/// once every item is done, whoever ran it: a worker whose CPU the host has not run since the
/// job was posted (a VM's virtual CPU can wait for milliseconds) does not hold up every
/// parallel loop — the caller takes its claims and goes on, and the worker skips the job when it
/// comes back. One job runs at a time: a caller that finds the pool busy (another thread's
/// `predict`) runs all parts itself rather than wait.
///
/// Synchronisation: the caller that wins `busy` (an acquiring compare-exchange) owns the job
/// fields; it writes them, opens the job (a releasing store of its generation to `open`), then
/// hands each helper the generation with a releasing store to the slot's `assigned` and rings
/// the slot's `Doorbell` in case the worker is asleep. A worker that sees a new generation
/// counts itself `inside`, then reads the job fields only if `open` still holds that
/// generation; each claim it finishes adds its items to `completed` (releasing). The caller
/// waits until an acquiring load of `completed` shows every item, closes the job (`open` = 0),
/// and waits until no worker is `inside` before it returns and the fields change: the
/// `inside` increment and the `open` load on one side, the `open` store and the `inside` load on
/// the other, are sequentially consistent, so either the worker sees the job closed or the
/// caller sees the worker inside. The caller gives up `busy` with a releasing store.
final class WorkerPool: @unchecked Sendable {
    // @unchecked Sendable: the job fields (`generation`, `jobType`, `jobAddress`, `count`,
    // `parts`, `claim`) are plain stored properties shared with the workers. They are safe by the
    // hand-off above: written only by the `busy` owner before its releasing store to `open`,
    // read by a worker only while it is `inside` and has seen that generation in `open`, and not
    // written again until the owner has closed the job and seen no worker inside. Everything
    // else is immutable or atomic.

    /// One worker's mailbox.
    private final class Slot: Sendable {
        /// The generation of the last job given to this worker.
        let assigned = Atomic<Int>(0)
        /// Where the worker sleeps when no job comes for a while.
        let doorbell = Doorbell()
    }

    /// A sleeping worker's wake-up: a condition variable, its mutex, and whether the worker is
    /// asleep. Kept as raw pthread objects (Synchronization's `Mutex` has no condition variable
    /// to wait on) that are allocated on the heap once and freed in `deinit`: a pthread mutex or
    /// condition must never move once initialised, which a stored property of a Swift class
    /// does not promise but a pointer's target does.
    private final class Doorbell: @unchecked Sendable {
        // @unchecked Sendable: the pointers are set once in init and never change; `sleeping`
        // is read and written only with `mutex` locked; the pthread calls are thread-safe.

        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        private var sleeping = false

        init() {
            mutex.initialize(to: pthread_mutex_t())
            condition.initialize(to: pthread_cond_t())
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(condition, nil)
        }

        /// Sleeps until `ready()` is true (checked with the mutex locked; a `ring` after the
        /// condition became true wakes the sleeper).
        func sleep(until ready: () -> Bool) {
            pthread_mutex_lock(mutex)
            sleeping = true
            while !ready() { pthread_cond_wait(condition, mutex) }
            sleeping = false
            pthread_mutex_unlock(mutex)
        }

        /// Wakes the sleeper, if there is one. Call after making its condition true.
        func ring() {
            pthread_mutex_lock(mutex)
            if sleeping { pthread_cond_signal(condition) }
            pthread_mutex_unlock(mutex)
        }

        deinit {
            pthread_cond_destroy(condition)
            pthread_mutex_destroy(mutex)
            condition.deinitialize(count: 1).deallocate()
            mutex.deinitialize(count: 1).deallocate()
        }
    }

    private final class Start {
        let pool: WorkerPool
        let index: Int
        init(pool: WorkerPool, index: Int) { self.pool = pool; self.index = index }
    }

    private let slots: [Slot]
    private let busy = Atomic<Bool>(false)
    private var generation = 0
    // The current job, published before the workers are woken: its type, its address on
    // the caller's stack, how the index range is split, and how many items a claim takes.
    private var jobType: any ParallelJob.Type = NoJob.self
    private var jobAddress: UnsafeRawPointer?
    private var count = 0
    private var parts = 1
    private var claim = 1
    /// Each participant's part's next unclaimed item.
    private let cursors: [Cursor]
    /// The generation of the job workers may join (0: none).
    private let open = Atomic<Int>(0)
    /// Items of the current job finished, by any participant.
    private let completed = Atomic<Int>(0)
    /// Workers between seeing a new generation and leaving it (joined or skipped).
    private let inside = Atomic<Int>(0)

    /// A part's next unclaimed item.
    private final class Cursor: Sendable {
        let next = Atomic<Int>(0)
    }

    /// The number of worker threads (the caller is one more participant).
    var workers: Int { slots.count }

    /// Nanoseconds a worker waits for its next job before it sleeps.
    private let idleNanoseconds: @Sendable () -> Int

    /// Makes `workers` workers and starts the threads of the first `started` (all when nil); the
    /// others start with ``startWorker(_:)`` (tests use a worker that comes late, or never). A
    /// worker waits `idleNanoseconds()` for its next job before it sleeps (by default
    /// ``Compute/workerIdleMilliseconds``).
    init(workers: Int, started: Int? = nil, idleNanoseconds: @escaping @Sendable () -> Int = { Compute.workerIdleNanoseconds }) {
        self.idleNanoseconds = idleNanoseconds
        slots = (0 ..< max(0, workers)).map { _ in Slot() }
        cursors = (0 ... max(0, workers)).map { _ in Cursor() }
        for index in 0 ..< min(slots.count, max(0, started ?? slots.count)) { startWorker(index) }
    }

    /// Starts worker `index`'s thread (once per worker).
    func startWorker(_ index: Int) {
        let context = Unmanaged.passRetained(Start(pool: self, index: index)).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            start.pool.workLoop(start.index)
            return nil
        }, context)
        pthread_detach(thread)
    }

    /// Part `part` of `0..<count` split into `parts`.
    @inline(__always)
    private static func range(_ part: Int, count: Int, parts: Int) -> Range<Int> {
        count * part / parts ..< count * (part + 1) / parts
    }

    /// Runs `job` over `0..<count` split into `parts` contiguous ranges, in parallel, and
    /// returns when all are done. Each participant works through its own part `claim` items at
    /// a time, then takes the claims of other parts that no one has started: a thread on a
    /// slower (or busier) CPU, or one woken late, leaves its last claims to the others.
    /// `claim` at least the largest part keeps every part whole on its own thread (unless its
    /// thread has not started it by the time another is done).
    func run<Job: ParallelJob>(_ job: Job, count: Int, parts: Int, claim: Int) {
        let parts = min(parts, cursors.count)
        let helpers = min(parts - 1, slots.count)
        guard helpers > 0, busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            for part in 0 ..< parts { job.run(Self.range(part, count: count, parts: parts), participant: 0) }
            return
        }
        withUnsafePointer(to: job) { address in
            jobType = Job.self
            jobAddress = UnsafeRawPointer(address)
            self.count = count
            self.parts = parts
            self.claim = max(1, claim)
            for part in 0 ..< parts {
                cursors[part].next.store(Self.range(part, count: count, parts: parts).lowerBound, ordering: .relaxed)
            }
            completed.store(0, ordering: .relaxed)
            generation = generation == Int.max ? 1 : generation + 1
            let current = generation
            open.store(current, ordering: .releasing)
            for index in 0 ..< helpers { post(current, to: slots[index]) }
            work(as: 0, Job.run(at:_:participant:), address)
            Self.wait { completed.load(ordering: .acquiring) >= count }
            open.store(0, ordering: .sequentiallyConsistent)
            Self.wait { inside.load(ordering: .sequentiallyConsistent) == 0 }
            jobAddress = nil
            jobType = NoJob.self
        }
        busy.store(false, ordering: .releasing)
    }

    /// Participant `participant`'s share of the current job: its own part a claim at a time,
    /// then the unclaimed items of the others. Claims are relaxed fetch-adds on each part's
    /// cursor: they order nothing but themselves (the items are independent; their results are
    /// published by the releasing adds to `completed`).
    private func work(as participant: Int, _ run: (UnsafeRawPointer, Range<Int>, Int) -> Void, _ address: UnsafeRawPointer) {
        for step in 0 ..< parts {
            let part = (participant + step) % parts
            let end = Self.range(part, count: count, parts: parts).upperBound
            while true {
                let start = cursors[part].next.wrappingAdd(claim, ordering: .relaxed).oldValue
                if start >= end { break }
                let stop = min(end, start + claim)
                run(address, start ..< stop, participant)
                completed.wrappingAdd(stop - start, ordering: .releasing)
            }
        }
    }

    private func post(_ generation: Int, to slot: Slot) {
        slot.assigned.store(generation, ordering: .releasing)
        slot.doorbell.ring()
    }

    private func workLoop(_ index: Int) {
        let slot = slots[index]
        var seen = 0
        while true {
            // Spin, then yield, for a while: a model's next parallel loop usually follows within
            // microseconds, and its next prediction often within milliseconds.
            var spins = 0, deadline = ContinuousClock.now
            while slot.assigned.load(ordering: .acquiring) == seen {
                if spins == Self.hintedSpins {
                    deadline = .now + .nanoseconds(max(0, idleNanoseconds()))
                } else if spins > Self.hintedSpins && spins % Self.yieldsPerClockRead == 0 && ContinuousClock.now >= deadline {
                    break
                }
                Self.wait(step: spins)
                spins += 1
            }
            if slot.assigned.load(ordering: .acquiring) == seen {
                slot.doorbell.sleep { slot.assigned.load(ordering: .acquiring) != seen }
            }
            seen = slot.assigned.load(ordering: .acquiring)
            inside.wrappingAdd(1, ordering: .sequentiallyConsistent)
            // A job the caller finished without this worker is closed (or another is open):
            // skip it; a newer generation in `assigned` is the next turn of the loop.
            if open.load(ordering: .sequentiallyConsistent) == seen, let address = jobAddress {
                work(as: index + 1, jobType.run(at:_:participant:), address)
            }
            inside.wrappingSubtract(1, ordering: .releasing)
        }
    }

    /// Busy-waits (``wait(step:)``) until `done()` holds.
    @inline(__always)
    private static func wait(until done: () -> Bool) {
        var spins = 0
        while !done() {
            wait(step: spins)
            spins += 1
        }
    }

    /// Waits on the CPU's spin hint (some tens of nanoseconds each) before the waits that yield
    /// the CPU: a brief spin that catches a loop following within microseconds.
    static let hintedSpins = 1_000

    /// Yields between two reads of the clock while a worker waits for its idle time to pass.
    static let yieldsPerClockRead = 64

    /// Step `step` (from 0) of a busy wait: the spin hint for the first ``hintedSpins`` steps,
    /// then `sched_yield`.
    @inline(__always)
    private static func wait(step: Int) {
        if step < hintedSpins { anvil_spin_wait() } else { _ = sched_yield() }
    }
}
