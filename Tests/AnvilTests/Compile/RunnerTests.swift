import Foundation
import Synchronization
import Testing
@testable import Anvil
import AnvilModels
@testable import AnvilTestSupport

/// The batching ``Runner``: concurrent requests are coalesced (exactly as many batches as the
/// settings allow), each caller gets exactly its own result, bit for bit what a call on its own
/// gives, shapes never mix, a bad request fails alone, and a waiting request can be cancelled.
@Suite("Batching runner")
struct RunnerTests {
    /// The batch-invariant network (`refBatchInvariantNetwork`): coalescing can be checked
    /// against calls on each request alone.
    static func convolutional(open: Bool = false) throws -> (Model, Input) {
        try refBatchInvariantNetwork(open: open, seed: 31)
    }

    @Test("96 concurrent callers: exactly their own result, the bits of a call on their own")
    func ownResults() async throws {
        let (model, input) = try Self.convolutional()
        let runner = try Runner(model: model, maximumBatch: 8, maximumWait: .milliseconds(5))
        var random = RefRandom(seed: 3_101)
        let requests = try (0 ..< 96).map { try random.tensor(n: 1 + $0 % 3, h: 10, w: 12, c: 3).tensor() }
        let expected = try requests.map { try model.predict($0) }
        let results = try await withThrowingTaskGroup(of: (Int, Tensor).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask { (index, try await runner.prediction(for: request)) }
            }
            var results = [Tensor?](repeating: nil, count: requests.count)
            for try await (index, result) in group { results[index] = result }
            return results
        }
        for index in requests.indices { #expect(results[index] == expected[index], "caller \(index)") }
        let statistics = runner.statistics
        #expect(statistics.requests == 96 && statistics.waiting == 0)
        #expect(statistics.images == requests.reduce(0) { $0 + $1.batch })
        _ = input
    }

    /// With a wait far longer than the test, batches go only when full: 32 single images in
    /// batches of 8 are exactly 4 batches, whatever the timing.
    @Test("Full batches go at once: 32 images, batches of 8, exactly 4 batches")
    func coalesces() async throws {
        let model = try MNISTNetwork.deep()
        try model.compile(from: RandomParameterSource(seed: 32))
        let runner = try Runner(model: model, maximumBatch: 8, maximumWait: .seconds(600))
        var random = RefRandom(seed: 3_202)
        let requests = try (0 ..< 32).map { _ in try random.tensor(n: 1, h: 28, w: 28, c: 1, 0, 1).tensor() }
        let results = try await withThrowingTaskGroup(of: (Int, Tensor).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask { (index, try await runner.prediction(for: request)) }
            }
            var results = [Tensor?](repeating: nil, count: requests.count)
            for try await (index, result) in group { results[index] = result }
            return results
        }
        #expect(runner.statistics == Runner.Statistics(requests: 32, batches: 4, images: 32, waiting: 0))
        // MNIST's dense layers may round differently in a batch of 8 than alone: each result is
        // checked against the call on its own within 1e-5 of the probabilities (docs/errors.md).
        for (index, request) in requests.enumerated() {
            let alone = try model.predict(request)
            let result = try #require(results[index])
            #expect(result.argmax() == alone.argmax(), "caller \(index)")
            #expect(zip(result.values, alone.values).allSatisfy { abs($0 - $1) <= 1e-5 }, "caller \(index)")
        }
    }

    @Test("onBatch hears every batch's image count: full batches of 8, and an oversized request alone")
    func reportsBatches() async throws {
        let (model, _) = try Self.convolutional()
        let heard = Mutex<[Int]>([])
        let runner = try Runner(model: model, maximumBatch: 8, maximumWait: .seconds(600)) { images in
            heard.withLock { $0.append(images) }
        }
        var random = RefRandom(seed: 3_404)
        let requests = try (0 ..< 12).map { _ in try random.tensor(n: 2, h: 10, w: 12, c: 3).tensor() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for request in requests { group.addTask { _ = try await runner.prediction(for: request) } }
            try await group.waitForAll()
        }
        _ = try await runner.prediction(for: try random.tensor(n: 9, h: 10, w: 12, c: 3).tensor())
        #expect(heard.withLock { $0 } == [8, 8, 8, 9])
        #expect(runner.statistics.batches == 3)
    }

    @Test("Requests of different sizes (an open input) never share a batch")
    func shapesDoNotMix() async throws {
        let (model, _) = try Self.convolutional(open: true)
        let runner = try Runner(model: model, maximumBatch: 4, maximumWait: .seconds(600))
        var random = RefRandom(seed: 3_303)
        let requests = try (0 ..< 8).map { try random.tensor(n: 1, h: $0 % 2 == 0 ? 10 : 14, w: 12, c: 3).tensor() }
        let expected = try requests.map { try model.predict($0) }
        let results = try await withThrowingTaskGroup(of: (Int, Tensor).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask { (index, try await runner.prediction(for: request)) }
            }
            var results = [Tensor?](repeating: nil, count: requests.count)
            for try await (index, result) in group { results[index] = result }
            return results
        }
        for index in requests.indices { #expect(results[index] == expected[index], "request \(index)") }
        #expect(runner.statistics.batches == 2)
    }

    @Test("A waiting request is cancelled at once; bad requests fail alone; bad settings are refused")
    func cancellationAndErrors() async throws {
        let (model, _) = try Self.convolutional()
        let runner = try Runner(model: model, maximumBatch: 8, maximumWait: .seconds(600))
        var random = RefRandom(seed: 3_404)
        let request = try random.tensor(n: 1, h: 10, w: 12, c: 3).tensor()
        let waiting = Task { try await runner.prediction(for: request) }
        try await refWaitUntil("the request waits for its batch") { runner.statistics.waiting == 1 }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(runner.statistics.waiting == 0 && runner.statistics.batches == 0)

        let wrong = try random.tensor(n: 1, h: 9, w: 12, c: 3).tensor()
        await #expect(throws: AnvilError.self) { try await runner.prediction(for: wrong) }
        await #expect(throws: AnvilError.self) { try await runner.prediction(for: [request, request]) }
        // More images than a batch holds: run on their own, right.
        let large = try random.tensor(n: 9, h: 10, w: 12, c: 3).tensor()
        #expect(try await runner.prediction(for: large) == (try model.predict(large)))
        Failure.expect(.invalidOption, mentioning: ["maximumBatch"]) { _ = try Runner(model: model, maximumBatch: 0) }
        Failure.expect(.invalidOption, mentioning: ["maximumWait"]) {
            _ = try Runner(model: model, maximumWait: .milliseconds(-1))
        }
    }
}
