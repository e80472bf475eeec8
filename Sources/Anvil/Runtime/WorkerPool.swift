#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Anvil's own threads for its loops (im2col, pooling, epilogues): persistent workers that
/// spin briefly, then sleep, so a parallel loop costs microseconds and allocates nothing.
///
/// Part 0 of a job runs on the caller, part `i` on worker `i - 1`; the caller returns only
/// after every worker has finished its part. One job runs at a time: a caller that finds
/// the pool busy (another thread's `predict`) runs all parts itself rather than wait.
final class WorkerPool: @unchecked Sendable {
    /// One worker's mailbox.
    private final class Slot: @unchecked Sendable {
        let assigned = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        var mutex = pthread_mutex_t()
        var wake = pthread_cond_t()
        var sleeping = false

        init() {
            pthread_mutex_init(&mutex, nil)
            pthread_cond_init(&wake, nil)
        }
    }

    private let slots: [Slot]
    private let busy = Atomic<Bool>(false)
    private var generation = 0
    private var job: ((Int) -> Void)?

    /// The number of worker threads (the caller is one more participant).
    var workers: Int { slots.count }

    /// Starts `workers` threads.
    init(workers: Int) {
        slots = (0 ..< max(0, workers)).map { _ in Slot() }
        for index in slots.indices {
            let context = Unmanaged.passRetained(Box(pool: self, index: index)).toOpaque()
            var thread = pthread_t()
            pthread_create(&thread, nil, { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.pool.workLoop(box.index)
                return nil
            }, context)
            pthread_detach(thread)
        }
    }

    private final class Box {
        let pool: WorkerPool
        let index: Int
        init(pool: WorkerPool, index: Int) { self.pool = pool; self.index = index }
    }

    /// Runs `body(part)` for every part in `0..<parts` (at most `workers + 1` run at once)
    /// and returns when all are done.
    func run(parts: Int, _ body: (Int) -> Void) {
        let helpers = min(parts - 1, slots.count)
        guard helpers > 0, busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            for part in 0 ..< parts { body(part) }
            return
        }
        withoutActuallyEscaping(body) { body in
            job = body
            generation &+= 1
            let current = generation
            for index in 0 ..< helpers { post(current, to: slots[index]) }
            // The caller takes part 0 and any parts beyond the workers.
            body(0)
            for part in (helpers + 1) ..< max(parts, helpers + 1) { body(part) }
            for index in 0 ..< helpers {
                while slots[index].done.load(ordering: .acquiring) != current { pause() }
            }
            job = nil
        }
        busy.store(false, ordering: .releasing)
    }

    private func post(_ generation: Int, to slot: Slot) {
        slot.assigned.store(generation, ordering: .releasing)
        pthread_mutex_lock(&slot.mutex)
        if slot.sleeping { pthread_cond_signal(&slot.wake) }
        pthread_mutex_unlock(&slot.mutex)
    }

    private func workLoop(_ index: Int) {
        let slot = slots[index]
        var seen = 0
        while true {
            // Spin a little: a model's next parallel loop usually follows within microseconds.
            var spins = 0
            while slot.assigned.load(ordering: .acquiring) == seen && spins < 2_000 {
                pause()
                spins += 1
            }
            if slot.assigned.load(ordering: .acquiring) == seen {
                pthread_mutex_lock(&slot.mutex)
                slot.sleeping = true
                while slot.assigned.load(ordering: .acquiring) == seen { pthread_cond_wait(&slot.wake, &slot.mutex) }
                slot.sleeping = false
                pthread_mutex_unlock(&slot.mutex)
            }
            seen = slot.assigned.load(ordering: .acquiring)
            job?(index + 1)
            slot.done.store(seen, ordering: .releasing)
        }
    }

    @inline(__always)
    private func pause() {
        _ = sched_yield()
    }
}
