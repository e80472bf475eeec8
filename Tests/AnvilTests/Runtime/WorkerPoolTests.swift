#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
@testable import Anvil

/// The worker pool's claims: every item runs exactly once however parts are cut into claims, and
/// a participant that runs out of its own part takes the unstarted claims of another's.
@Suite struct WorkerPoolTests {
    /// Counts how often each item ran; an item run twice (or never) fails the test.
    final class Visits: @unchecked Sendable {
        // @unchecked Sendable: each item's counter is written by the one participant that
        // claimed it (a second claim would be the bug under test, and ThreadSanitizer reports it).
        let counts: UnsafeMutablePointer<Int>
        let count: Int
        init(count: Int) {
            self.count = count
            counts = .allocate(capacity: count)
            counts.initialize(repeating: 0, count: count)
        }
        deinit { counts.deallocate() }
        var all: [Int] { Array(UnsafeBufferPointer(start: counts, count: count)) }
    }

    static let sharedPool = WorkerPool(workers: 1)

    struct Record: ParallelJob {
        let visits: Visits
        func run(_ range: Range<Int>) {
            for item in range { visits.counts[item] += 1 }
        }
    }

    @Test(arguments: [(1, 1, 1), (7, 2, 1), (100, 2, 3), (100, 2, 50), (100, 2, 100), (5, 2, 64), (1_000, 2, 7)])
    func everyItemRunsOnce(count: Int, parts: Int, claim: Int) {
        // A pool's threads live as long as the process: one pool for the suite's cases (a case
        // that finds it busy runs every part on its own thread, which must also visit each once).
        let pool = Self.sharedPool
        for _ in 0 ..< 50 {
            let visits = Visits(count: count)
            pool.run(Record(visits: visits), count: count, parts: parts, claim: claim)
            #expect(visits.all == [Int](repeating: 1, count: count), "count \(count), parts \(parts), claim \(claim)")
        }
    }

    /// Set when an item of part 1 ran on the caller.
    final class Flag: Sendable { let value = Atomic<Bool>(false) }

    @Test func aParticipantTakesAnotherPartsUnstartedClaims() {
        let pool = WorkerPool(workers: 1)
        let flag = Flag()
        let job = StealProbe(caller: pthread_self(), firstOfPartOne: 16, flag: flag)
        pool.run(job, count: 32, parts: 2, claim: 1)
        let callerTookOne = flag.value.load(ordering: .acquiring)
        #expect(callerTookOne, "no item of the worker's part ran on the caller")
    }

    /// Part 1's first item, on the worker, waits until an item of part 1 has run on the caller:
    /// only a caller that takes the worker's unstarted claims after finishing its own part lets
    /// it go on. Without that, it waits out its five seconds and the flag stays unset. (If the
    /// worker starts late, the caller takes that first item too and sets the flag itself.)
    struct StealProbe: ParallelJob {
        let caller: pthread_t
        let firstOfPartOne: Int
        let flag: Flag

        func run(_ range: Range<Int>) {
            for item in range where item >= firstOfPartOne {
                if pthread_equal(pthread_self(), caller) != 0 {
                    flag.value.store(true, ordering: .releasing)
                    continue
                }
                guard item == firstOfPartOne else { continue }
                var waited = 0
                while !flag.value.load(ordering: .acquiring) && waited < 5_000 {
                    usleep(1_000)
                    waited += 1
                }
            }
        }
    }

    /// A worker whose thread does not run (here: not started; on a VM, a virtual CPU the host
    /// has not scheduled) must not hold up the caller: it takes every claim and returns. Waiting
    /// for each worker to report, as the pool did, never returns here. The worker that comes
    /// late skips the finished job and serves the next ones.
    @Test func theCallerFinishesWithoutAWorkerThatHasNotCome() {
        let pool = WorkerPool(workers: 1, started: 0)
        let visits = Visits(count: 64)
        let finished = Flag()
        let caller = Thread {
            pool.run(Record(visits: visits), count: 64, parts: 2, claim: 4)
            finished.value.store(true, ordering: .releasing)
        }
        caller.start()
        var waited = 0
        while !finished.value.load(ordering: .acquiring) && waited < 10_000 {
            usleep(1_000)
            waited += 1
        }
        let returned = finished.value.load(ordering: .acquiring)
        #expect(returned, "the caller waited for a worker that never started")
        guard returned else { return }
        #expect(visits.all == [Int](repeating: 1, count: 64))

        pool.startWorker(0)
        for _ in 0 ..< 50 {
            let next = Visits(count: 100)
            pool.run(Record(visits: next), count: 100, parts: 2, claim: 3)
            #expect(next.all == [Int](repeating: 1, count: 100))
        }
        // The late worker takes part again: its part's first item waits for the caller's steal.
        let flag = Flag()
        pool.run(StealProbe(caller: pthread_self(), firstOfPartOne: 16, flag: flag), count: 32, parts: 2, claim: 1)
        let callerTookOne = flag.value.load(ordering: .acquiring)
        #expect(callerTookOne)
    }

    /// A worker that sleeps as soon as it has no job (no idle wait) wakes for the next one: each
    /// job's first item, on the caller, waits until the worker has run an item of it, so a worker
    /// that stayed asleep leaves the flag unset after five seconds. The jobs are 5 ms apart, so
    /// the worker is asleep when each is posted.
    @Test func aWorkerThatSleptWakesForTheNextJob() {
        let pool = WorkerPool(workers: 1, idleNanoseconds: { 0 })
        for _ in 0 ..< 5 {
            usleep(5_000)
            let flag = Flag()
            let visits = Visits(count: 64)
            pool.run(WakeProbe(caller: pthread_self(), flag: flag, visits: visits), count: 64, parts: 2, claim: 1)
            let workerRan = flag.value.load(ordering: .acquiring)
            #expect(workerRan, "the sleeping worker did not take part in the job")
            #expect(visits.all == [Int](repeating: 1, count: 64))
        }
    }

    /// Item 0 (the caller's first) waits up to five seconds for an item to run on another thread.
    struct WakeProbe: ParallelJob {
        let caller: pthread_t
        let flag: Flag
        let visits: Visits

        func run(_ range: Range<Int>) {
            for item in range {
                visits.counts[item] += 1
                if pthread_equal(pthread_self(), caller) == 0 {
                    flag.value.store(true, ordering: .releasing)
                } else if item == 0 {
                    var waited = 0
                    while !flag.value.load(ordering: .acquiring) && waited < 5_000 {
                        usleep(1_000)
                        waited += 1
                    }
                }
            }
        }
    }

    @Test func theWorkersIdleTimeIsClampedAndReadBack() {
        let saved = Compute.workerIdleMilliseconds
        defer { Compute.workerIdleMilliseconds = saved }
        Compute.workerIdleMilliseconds = 12.5
        #expect(Compute.workerIdleMilliseconds == 12.5)
        #expect(Compute.workerIdleNanoseconds == 12_500_000)
        Compute.workerIdleMilliseconds = -3
        #expect(Compute.workerIdleMilliseconds == 0)
        Compute.workerIdleMilliseconds = 1e9
        #expect(Compute.workerIdleMilliseconds == 60_000)
    }
}
