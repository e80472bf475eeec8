import Dispatch
import Synchronization

/// Coalesces concurrent predictions into batches — the CPU counterpart of Forge's `Runner`: a
/// server's handlers each ask for their own images, and the runner runs what arrives within
/// ``maximumWait`` (or until ``maximumBatch`` images are waiting) as one batch on Anvil's own
/// threads, then hands each caller exactly its own outputs. A batch of 8 costs far less than 8
/// batches of 1 (weights are read once, every thread gets work), so throughput under load rises
/// at the price of at most ``maximumWait`` of latency.
///
/// ```swift
/// let runner = try Runner(model: model, maximumBatch: 16, maximumWait: .milliseconds(2))
/// let probabilities = try await runner.prediction(for: image)  // from any number of tasks at once
/// ```
///
/// Requests are grouped by their input shapes (a model with open inputs sees several sizes); a
/// request of more than ``maximumBatch`` images runs on its own. Cancelling a request's task
/// before its batch starts removes it (`CancellationError`); a batch that started completes.
/// Results are those of ``Model/predict(_:)-([Tensor])`` on the batch the request joined: equal
/// to a call on the request alone up to the last bits where a layer's summation order depends on
/// the batch size (see docs/errors.md, "Determinism").
public final class Runner: Sendable {
    /// The compiled model every request runs through.
    public let model: Model
    /// The most images one batch holds.
    public let maximumBatch: Int
    /// How long the first request of a batch waits for others.
    public let maximumWait: Duration

    /// Totals since the runner was made, for metrics.
    public struct Statistics: Sendable, Equatable {
        /// Requests taken into a batch, or cancelled while waiting.
        public var requests = 0
        /// Batches run.
        public var batches = 0
        /// Images in those batches.
        public var images = 0
        /// Requests waiting for a batch right now.
        public var waiting = 0
    }

    /// Whether a request reached the queue or was cancelled first (its task may be cancelled
    /// before its continuation exists).
    private final class Ticket: Sendable {
        enum Stage { case arriving, queued, cancelled }
        let stage = TracedMutex(Stage.arriving)
    }

    /// A request's outputs with how long it waited for its batch and how long the batch ran
    /// (a server's statistics: Triton's queue and compute_infer times).
    public struct TimedOutputs: Sendable {
        /// The request's own outputs, as ``prediction(for:)-([Tensor])`` returns them.
        public let outputs: [Tensor]
        /// From the request's arrival to its batch starting to run.
        public let queued: Duration
        /// The batch's prediction.
        public let computed: Duration
    }

    private struct Request {
        let ticket: Ticket
        let inputs: [Tensor]
        let images: Int
        let arrived: ContinuousClock.Instant
        let continuation: CheckedContinuation<TimedOutputs, any Error>
    }

    private struct State {
        var pending: [Request] = []
        /// Whether a flush is scheduled for what is pending.
        var flushScheduled = false
        var statistics = Statistics()
    }

    private let state = TracedMutex(State())
    /// Told the image count of each batch as it starts (a server's batch-size histogram).
    private let onBatch: (@Sendable (Int) -> Void)?

    /// A runner for `model` (compiled); throws unless `maximumBatch` ≥ 1 and `maximumWait` ≥ 0.
    /// `onBatch`, if given, is called with the number of images of every batch as it starts
    /// (a request of more than `maximumBatch` images is a batch of its own), on the thread that
    /// formed it: keep it short.
    public init(model: Model, maximumBatch: Int = 16, maximumWait: Duration = .milliseconds(2),
                onBatch: (@Sendable (Int) -> Void)? = nil) throws {
        guard maximumBatch >= 1 else { throw AnvilError(.invalidOption, "Runner: maximumBatch must be at least 1, got \(maximumBatch)") }
        guard maximumWait >= .zero else { throw AnvilError(.invalidOption, "Runner: maximumWait must not be negative, got \(maximumWait)") }
        self.model = model
        self.maximumBatch = maximumBatch
        self.maximumWait = maximumWait
        self.onBatch = onBatch
    }

    /// The totals so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// The outputs of a single-input, single-output model for `input` (a batch of one or more
    /// images), run in a batch with whatever other requests arrive meanwhile.
    public func prediction(for input: Tensor) async throws -> Tensor {
        guard model.outputShapes.count == 1 else {
            throw AnvilError(.invalidInput, "this model has \(model.outputShapes.count) outputs; use prediction(for: [Tensor])")
        }
        return try await prediction(for: [input])[0]
    }

    /// The outputs for `inputs` (one tensor per model input, all with the same batch size), run
    /// in a batch with whatever other requests arrive meanwhile.
    public func prediction(for inputs: [Tensor]) async throws -> [Tensor] {
        try await timedPrediction(for: inputs).outputs
    }

    /// ``prediction(for:)-([Tensor])`` with the time the request waited for its batch and the
    /// time the batch took.
    public func timedPrediction(for inputs: [Tensor]) async throws -> TimedOutputs {
        let arrived = ContinuousClock.now
        guard inputs.count == model.inputShapes.count else {
            throw AnvilError(.invalidInput, "the model has \(model.inputShapes.count) input(s), \(inputs.count) tensor(s) given")
        }
        let images = inputs.first?.batch ?? 0
        guard images >= 1, inputs.allSatisfy({ $0.batch == images }) else {
            throw AnvilError(.invalidInput, "every input tensor needs the same batch size of at least 1, got \(inputs.map(\.batch))")
        }
        // A request the model refuses is refused alone, never inside a batch with others.
        _ = try model.outputShapes(forInputShapes: inputs.map(\.shape))
        if images > maximumBatch {
            onBatch?(images)
            let start = ContinuousClock.now
            let outputs = try await model.prediction(for: inputs)
            return TimedOutputs(outputs: outputs, queued: start - arrived, computed: ContinuousClock.now - start)
        }
        try Task.checkCancellation()
        let ticket = Ticket()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enqueue(Request(ticket: ticket, inputs: inputs, images: images, arrived: arrived, continuation: continuation))
            }
        } onCancel: {
            cancel(ticket)
        }
    }

    /// Adds a request; flushes now when a batch is full, else makes sure a flush is scheduled.
    private func enqueue(_ request: Request) {
        enum Next { case cancelled, flushNow, schedule, nothing }
        let cancelled = request.ticket.stage.withLock { stage -> Bool in
            if stage == .cancelled { return true }
            stage = .queued
            return false
        }
        let next = cancelled ? .cancelled : state.withLock { state -> Next in
            state.pending.append(request)
            state.statistics.waiting = state.pending.count
            let shapes = request.inputs.map(\.shape)
            let waitingImages = state.pending.lazy.filter { $0.inputs.map(\.shape) == shapes }.reduce(0) { $0 + $1.images }
            if waitingImages >= maximumBatch { return .flushNow }
            if state.flushScheduled { return .nothing }
            state.flushScheduled = true
            return .schedule
        }
        switch next {
        case .cancelled: request.continuation.resume(throwing: CancellationError())
        case .flushNow: flush(onlyFull: true)
        case .schedule: scheduleFlush()
        case .nothing: break
        }
    }

    /// Flushes whatever is pending after ``maximumWait``. The timer is Dispatch's, not a task's
    /// sleep: a task's wake-up waits its turn in Swift's cooperative pool, which a busy process
    /// (the test suite under ThreadSanitizer) can hold for minutes, and the batch with it.
    private func scheduleFlush() {
        let (seconds, attoseconds) = maximumWait.components
        // Waits beyond 285 years are capped there (the init refused negative ones).
        let nanoseconds = seconds >= 9_000_000_000 ? 9_000_000_000 * 1_000_000_000 : Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
            flush(onlyFull: false)
        }
    }

    /// Takes the pending requests as batches (grouped by input shapes, at most ``maximumBatch``
    /// images each, oldest first) and hands each to a prediction thread. With `onlyFull`, only
    /// full batches go; the rest wait for the scheduled flush.
    private func flush(onlyFull: Bool) {
        var batches: [[Request]] = []
        var schedule = false
        state.withLock { state in
            while let first = state.pending.first {
                let shapes = first.inputs.map(\.shape)
                var batch: [Request] = [], images = 0, rest: [Request] = []
                for request in state.pending {
                    if request.inputs.map(\.shape) == shapes && images + request.images <= maximumBatch {
                        batch.append(request)
                        images += request.images
                    } else {
                        rest.append(request)
                    }
                }
                // Full: no room left, or the next request of these shapes does not fit.
                let full = images == maximumBatch || rest.contains { $0.inputs.map(\.shape) == shapes }
                if onlyFull && !full { break }
                batches.append(batch)
                state.pending = rest
                state.statistics.batches += 1
                state.statistics.images += images
            }
            state.statistics.waiting = state.pending.count
            if !onlyFull {
                // What is left (nothing, unless full batches were cut short) gets a flush of its own.
                state.flushScheduled = !state.pending.isEmpty
                schedule = state.flushScheduled
            }
        }
        for batch in batches {
            onBatch?(batch.reduce(0) { $0 + $1.images })
            PredictionThreads.shared.submit { [model] in Self.run(batch, on: model) }
        }
        if schedule { scheduleFlush() }
        let answered = batches.reduce(0) { $0 + $1.count }
        if answered > 0 { state.withLock { $0.statistics.requests += answered } }
    }

    /// Runs one batch and gives each request its slice of the outputs (or the error).
    private static func run(_ batch: [Request], on model: Model) {
        do {
            let inputs: [Tensor]
            if batch.count == 1 {
                inputs = batch[0].inputs
            } else {
                inputs = try batch[0].inputs.indices.map { index in
                    try Tensor(batch: batch.reduce(0) { $0 + $1.images }, shape: batch[0].inputs[index].shape,
                               values: batch.flatMap { $0.inputs[index].values })
                }
            }
            let start = ContinuousClock.now
            let outputs = try model.predict(inputs)
            let computed = ContinuousClock.now - start
            var offset = 0
            for request in batch {
                let slices = try outputs.map { output in
                    let size = output.shape.count
                    return try Tensor(batch: request.images, shape: output.shape,
                                      values: Array(output.values[(offset * size) ..< ((offset + request.images) * size)]))
                }
                offset += request.images
                request.continuation.resume(returning: TimedOutputs(outputs: slices, queued: start - request.arrived, computed: computed))
            }
        } catch {
            for request in batch { request.continuation.resume(throwing: error) }
        }
    }

    /// A request's task was cancelled: one still waiting leaves the queue with `CancellationError`;
    /// one not queued yet never will be; one in a batch gets its result.
    private func cancel(_ ticket: Ticket) {
        let queued = ticket.stage.withLock { stage -> Bool in
            if stage == .arriving { stage = .cancelled }
            return stage == .queued
        }
        guard queued else { return }
        let request = state.withLock { state -> Request? in
            guard let index = state.pending.firstIndex(where: { $0.ticket === ticket }) else { return nil }
            let request = state.pending.remove(at: index)
            state.statistics.waiting = state.pending.count
            state.statistics.requests += 1
            return request
        }
        request?.continuation.resume(throwing: CancellationError())
    }
}
