import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Anvil
import AnvilModels
@testable import AnvilTestSupport

/// A layer that copies its input and records each pass: whether it ran on one of Anvil's
/// prediction threads, and how many passes ran. A pass whose first value is `blockValue` waits
/// for ``release(_:)`` first, so a test can keep every prediction thread busy.
final class RecordingLayer: Layer {
    static let blockValue: Float = 12_345
    let name: String? = "recorder"
    let passes = Atomic<Int>(0)
    let onPredictionThread = Mutex<[Bool]>([])
    let gate = DispatchSemaphore(value: 0)

    func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0] }

    func makeKernel(_ context: KernelContext) throws -> any Kernel { RecordingKernel(layer: self) }

    /// Lets `count` blocked passes go on.
    func release(_ count: Int) { for _ in 0 ..< count { gate.signal() } }
}

struct RecordingKernel: Kernel {
    let layer: RecordingLayer

    func run(_ io: KernelIO) {
        layer.passes.add(1, ordering: .relaxed)
        let onPredictionThread = PredictionThreads.shared.isCurrentThread
        layer.onPredictionThread.withLock { $0.append(onPredictionThread) }
        if io.inputs[0][0] == RecordingLayer.blockValue { layer.gate.wait() }
        io.outputBuffer.update(from: io.input(0))
    }
}

/// `prediction(for:)`: the same bits as `predict`, on Anvil's own threads (not the caller's),
/// each concurrent caller its own result, and cancellation before a pass starts means the pass
/// never runs.
@Suite("Async prediction")
struct AsyncPredictionTests {
    static func mnist() throws -> Model {
        let model = try MNISTNetwork.deep()
        try model.compile(from: RandomParameterSource(seed: 21))
        return model
    }

    @Test("prediction(for:) gives predict's bits for one and several inputs")
    func sameBitsAsPredict() async throws {
        let model = try Self.mnist()
        var random = RefRandom(seed: 2_101)
        let input = try random.tensor(n: 3, h: 28, w: 28, c: 1, 0, 1).tensor()
        let expected = try model.predict(input)
        #expect(try await model.prediction(for: input) == expected)
        #expect(try await model.prediction(for: [input]) == [expected])
    }

    @Test("64 concurrent callers each get exactly their own result, bit for bit")
    func concurrentCallers() async throws {
        let model = try Self.mnist()
        var random = RefRandom(seed: 2_202)
        let inputs = try (0 ..< 64).map { try random.tensor(n: 1 + $0 % 3, h: 28, w: 28, c: 1, 0, 1).tensor() }
        let expected = try inputs.map { try model.predict($0) }
        let results = try await withThrowingTaskGroup(of: (Int, Tensor).self) { group in
            for (index, input) in inputs.enumerated() {
                group.addTask { (index, try await model.prediction(for: input)) }
            }
            var results = [Tensor?](repeating: nil, count: inputs.count)
            for try await (index, result) in group { results[index] = result }
            return results
        }
        for index in inputs.indices { #expect(results[index] == expected[index], "caller \(index)") }
    }

    @Test("The pass runs on Anvil's prediction threads, not on the awaiting task's thread")
    func runsOnPredictionThreads() async throws {
        let layer = RecordingLayer()
        let input = Input(width: 2, height: 2, channels: 3)
        let model = try Model(input: input, output: input --> layer)
        try model.compile(from: ArrayParameterSource([:]))
        let values = try Tensor(batch: 1, shape: input.shape, values: (0 ..< 12).map(Float.init))
        #expect(try await model.prediction(for: values) == values)
        #expect(layer.onPredictionThread.withLock { $0 } == [true])
        // A synchronous predict runs where it is called.
        _ = try model.predict(values)
        #expect(layer.onPredictionThread.withLock { $0 } == [true, false])
    }

    @Test("Cancelled before it starts: CancellationError, and the pass never runs")
    func cancellation() async throws {
        let layer = RecordingLayer()
        let input = Input(width: 1, height: 1, channels: 2)
        let model = try Model(input: input, output: input --> layer)
        try model.compile(from: ArrayParameterSource([:]))
        let plain = try Tensor(batch: 1, shape: input.shape, values: [1, 2])

        // A task cancelled before it asks.
        let early = Task { () async throws -> Tensor in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await model.prediction(for: plain)
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(layer.passes.load(ordering: .relaxed) == 0)

        // Every prediction thread busy with a pass that waits; a queued prediction is cancelled.
        let threads = Compute.maximumThreadCount
        let blocking = try Tensor(batch: 1, shape: input.shape, values: [RecordingLayer.blockValue, 0])
        let busy = (0 ..< threads).map { _ in Task { try await model.prediction(for: blocking) } }
        try await refWaitUntil("every prediction thread runs a blocked pass") { layer.passes.load(ordering: .relaxed) == threads }
        let queued = Task { try await model.prediction(for: plain) }
        try await Task.sleep(for: .milliseconds(20))  // most likely queued by now; either way it must not run
        queued.cancel()
        await #expect(throws: CancellationError.self) { try await queued.value }
        layer.release(threads)
        for task in busy { #expect(try await task.value == blocking) }
        #expect(layer.passes.load(ordering: .relaxed) == threads)
        // The threads serve the next prediction.
        #expect(try await model.prediction(for: plain) == plain)
    }
}
