import Synchronization

/// One async prediction's hand-off between the awaiting task and a ``PredictionThreads`` thread:
/// whoever comes first of the work's end and the task's cancellation resumes the continuation,
/// exactly once. Work cancelled before a thread picks it up never runs.
final class PredictionJob<Result: Sendable>: Sendable {
    private enum State {
        /// Created; neither started nor cancelled.
        case idle
        /// Queued; the continuation waits.
        case queued(CheckedContinuation<Result, any Error>)
        /// Running on a prediction thread; the continuation waits for its result.
        case running(CheckedContinuation<Result, any Error>)
        /// Cancelled before it ran (or before it was queued).
        case cancelled
        /// Resumed.
        case finished
    }

    private let state = TracedMutex<State>(.idle)
    private let work: @Sendable () throws -> Result

    init(_ work: @escaping @Sendable () throws -> Result) { self.work = work }

    /// Queues the work, or resumes at once with `CancellationError` if the task was cancelled.
    func start(_ continuation: CheckedContinuation<Result, any Error>) {
        let cancelled = state.withLock { state -> Bool in
            if case .cancelled = state { return true }
            state = .queued(continuation)
            return false
        }
        if cancelled {
            continuation.resume(throwing: CancellationError())
            return
        }
        PredictionThreads.shared.submit { self.run() }
    }

    /// On a prediction thread: runs the work unless cancelled meanwhile, then resumes.
    private func run() {
        let wanted = state.withLock { state -> Bool in
            guard case .queued(let continuation) = state else { return false }
            state = .running(continuation)
            return true
        }
        guard wanted else { return }
        let result = Swift.Result { try work() }
        let continuation = state.withLock { state -> CheckedContinuation<Result, any Error>? in
            guard case .running(let continuation) = state else { return nil }
            state = .finished
            return continuation
        }
        continuation?.resume(with: result)
    }

    /// The task was cancelled: a job not yet run resumes with `CancellationError` and will not run;
    /// one already running finishes and returns its result.
    func cancel() {
        let continuation = state.withLock { state -> CheckedContinuation<Result, any Error>? in
            switch state {
            case .idle:
                state = .cancelled
                return nil
            case .queued(let continuation):
                state = .cancelled
                return continuation
            case .running, .cancelled, .finished:
                return nil
            }
        }
        continuation?.resume(throwing: CancellationError())
    }
}
