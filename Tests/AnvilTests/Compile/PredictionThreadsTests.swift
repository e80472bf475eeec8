import Foundation
import Testing
@testable import Anvil

/// A job's closure (and what it captured: a request's inputs) is released once the job has run,
/// even when the queue never empties — as under a server's steady load.
@Suite("Prediction threads", .serialized)
struct PredictionThreadsTests {
    private final class Payload: Sendable {}

    @Test("a finished job's captures are released while other jobs are still queued")
    func releasesFinishedJobs() async throws {
        let threads = PredictionThreads.shared
        let firstGate = DispatchSemaphore(value: 0), secondGate = DispatchSemaphore(value: 0)
        let ran = DispatchSemaphore(value: 0)
        // Every thread busy, then the job under test, then more than the threads can take at once.
        for _ in 0 ..< threads.count { threads.submit { firstGate.wait() } }
        weak var watched: Payload?
        do {
            let payload = Payload()
            watched = payload
            threads.submit { _ = payload; ran.signal() }
        }
        for _ in 0 ... threads.count { threads.submit { secondGate.wait() } }
        for _ in 0 ..< threads.count { firstGate.signal() }
        ran.wait()
        // The queue still holds a job no thread is free to take; the finished one must be gone.
        var released = false
        for _ in 0 ..< 500 where !released {
            released = watched == nil
            if !released { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(released, "the finished job's closure still holds its payload")
        for _ in 0 ... threads.count { secondGate.signal() }
    }
}
