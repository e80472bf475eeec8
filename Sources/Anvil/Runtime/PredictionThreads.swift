import Foundation
import Synchronization

/// Anvil's own threads for async predictions (``Model/prediction(for:)-(Tensor)``): a forward
/// pass is seconds of CPU work that must not hold one of the few threads of Swift's cooperative
/// pool, so `prediction(for:)` hands it here and suspends until it is done.
///
/// As many threads as Anvil's compute threads, created on first use and kept; jobs run first in,
/// first out. Each pass still splits its layers over ``Compute``'s worker pool when that is free.
final class PredictionThreads: @unchecked Sendable {
    // @unchecked Sendable: `queue` and `head` are read and written only with `condition` locked;
    // `threads` is a Mutex.

    /// The threads every async prediction runs on.
    static let shared = PredictionThreads(count: Compute.maximumThreadCount)

    /// The name of every thread, followed by its index (for debuggers and `top -H`).
    static let threadName = "anvil-pass"

    /// How many threads run the jobs.
    let count: Int
    /// What a taken slot holds: nothing.
    private static let done: @Sendable () -> Void = {}

    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var head = 0
    /// The threads, as each registers itself.
    private let threads = TracedMutex<[pthread_t]>([])

    private init(count: Int) {
        self.count = max(1, count)
        for index in 0 ..< max(1, count) {
            let thread = Thread { [unowned self] in
                // Named from inside: on Linux a name given before `start` does not reach the thread.
                Thread.current.name = "\(Self.threadName)-\(index)"
                threads.withLock { $0.append(pthread_self()) }
                self.serve()
            }
            thread.stackSize = 8 << 20  // a kernel's stack needs what a main thread has
            thread.start()
        }
    }

    /// Whether the caller is one of these threads (a thread's name is no proof on Linux: a new
    /// thread starts with its creator's, and Foundation does not always replace it).
    var isCurrentThread: Bool {
        let current = pthread_self()
        return threads.withLock { $0.contains { pthread_equal($0, current) != 0 } }
    }

    /// Queues `work`; one of the threads runs it.
    func submit(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        queue.append(work)
        condition.signal()
        condition.unlock()
    }

    /// Runs queued work forever.
    private func serve() {
        while true {
            condition.lock()
            while head == queue.count { condition.wait() }
            let work = queue[head]
            // Release what the closure holds (a request's inputs) now: under steady load the
            // queue never drains, and kept closures would hold every input ever queued (a
            // server's resident memory would grow by the size of each request's image).
            queue[head] = Self.done
            head += 1
            if head == queue.count {  // drained: drop the finished slots
                queue.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, 2 * head >= queue.count {  // never drained: compact now and then
                queue.removeFirst(head)
                head = 0
            }
            condition.unlock()
            work()
        }
    }
}
