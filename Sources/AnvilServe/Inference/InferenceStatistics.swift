import Foundation
import NIOConcurrencyHelpers
import Synchronization

/// One model's inference statistics as Triton's statistics extension reports them
/// (`GET /v2/models/{name}/stats`, gRPC `ModelStatistics`): successful and failed requests with
/// their cumulative durations, and for the successful ones the time spent reading the request
/// (compute_input), waiting for a batch (queue), in the model (compute_infer) and writing the
/// answer (compute_output). Counts are of requests except `inferenceCount` (images) and
/// `executionCount` (batches the runner ran).
final class InferenceStatistics: Sendable {
    /// A count and the cumulative nanoseconds of what was counted.
    struct Duration: Sendable, Equatable {
        /// How many.
        var count: UInt64 = 0
        /// Their total time, in nanoseconds.
        var nanoseconds: UInt64 = 0

        /// Adds one of `duration`.
        mutating func add(_ duration: Swift.Duration) {
            count += 1
            nanoseconds += InferenceStatistics.nanoseconds(duration)
        }
    }

    /// The totals so far.
    struct Snapshot: Sendable, Equatable {
        /// Requests answered.
        var success = Duration()
        /// Requests refused or failed (a bad input, a failure in the model, a client gone).
        var failure = Duration()
        /// Successful requests' time waiting for their batch.
        var queue = Duration()
        /// Successful requests' time reading and checking their inputs.
        var computeInput = Duration()
        /// Successful requests' time in their batch's prediction.
        var computeInfer = Duration()
        /// Successful requests' time writing their outputs.
        var computeOutput = Duration()
        /// Images of successful requests (Triton counts each image of a batched request).
        var inferenceCount: UInt64 = 0
        /// Milliseconds since 1970 of the last successful request's answer, 0 before any.
        var lastInference: UInt64 = 0
    }

    /// The durations of one successful request.
    struct Timing: Sendable {
        var total: Swift.Duration
        var input: Swift.Duration
        var queue: Swift.Duration
        var infer: Swift.Duration
        var output: Swift.Duration
        var images: Int
    }

    private let state = NIOLockedValueBox(Snapshot())

    /// The totals now.
    var snapshot: Snapshot { state.withLockedValue { $0 } }

    /// Counts a successful request.
    func succeeded(_ timing: Timing) {
        let now = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
        state.withLockedValue { state in
            state.success.add(timing.total)
            state.computeInput.add(timing.input)
            state.queue.add(timing.queue)
            state.computeInfer.add(timing.infer)
            state.computeOutput.add(timing.output)
            state.inferenceCount += UInt64(timing.images)
            state.lastInference = now
        }
    }

    /// Counts a failed request that took `duration`.
    func failed(after duration: Swift.Duration) {
        state.withLockedValue { $0.failure.add(duration) }
    }

    /// Whole nanoseconds of a non-negative duration.
    static func nanoseconds(_ duration: Swift.Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}
