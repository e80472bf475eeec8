import Foundation

/// Threads of their own for the test servers' tasks (a task executor preference, inherited by
/// every connection's and handler's child task), so the servers answer promptly however busy
/// Swift's cooperative pool is. The suite's other tests hold that pool's two threads on a
/// 2-core machine for many minutes under ThreadSanitizer; a task a handler enqueued behind them
/// waited more than 1,000 s, long enough for a client or server timeout to end the request.
final class ServeTestExecutor: TaskExecutor, @unchecked Sendable {
    /// The executor the test servers share.
    static let shared = ServeTestExecutor(threads: 2)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init(threads: Int) {
        for index in 0 ..< threads {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "anvil.serve.test.\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs jobs in the order they came, forever (the executor lives as long as the process).
    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
