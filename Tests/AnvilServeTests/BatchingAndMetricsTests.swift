import Anvil
@testable import AnvilServe
@testable import AnvilTestSupport
import Foundation
import Testing

/// Requests from concurrent clients are coalesced by the model's runner (each still gets its own
/// answer), and `/metrics` is Prometheus text whose counts match what was sent.
@Suite("Serving: batching and metrics")
struct BatchingAndMetricsTests {
    /// The samples of a Prometheus text exposition: `name{labels}` → value; every line is a
    /// comment or `series value`, else the test fails.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                Issue.record("not a Prometheus sample: \(line)")
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    @Test("24 concurrent clients: coalesced into fewer batches, each its own bits; metrics count them")
    func coalescedAndCounted() async throws {
        let model = try ServeFixtures.convolutional()
        // A long wait: batches go when 8 images are waiting, so 24 single-image requests are 3 batches.
        // No timer flushes the batch within the test: the three stay waiting however slowly
        // they arrive (with a 30 s wait, a loaded machine flushed the first before the third came,
        // and the test waited forever for a queue depth of 3).
        let served = try ServedModel(name: "net", model: model, maximumBatch: 8, maximumWait: .seconds(600))
        let server = try await TestServer([served])
        let tensors = try (0 ..< 24).map { try ServeFixtures.tensor(batch: 1, shape: model.inputShapes[0], seed: 100 + $0) }
        let replies = try await withThrowingTaskGroup(of: (Int, TestServer.Reply).self) { group in
            for (index, tensor) in tensors.enumerated() {
                group.addTask { (index, try await server.infer("net", InferenceRequest(inputs: [ServeFixtures.input(model.inputNames[0], tensor)]))) }
            }
            var replies = [TestServer.Reply?](repeating: nil, count: tensors.count)
            for try await (index, reply) in group { replies[index] = reply }
            return replies.map { $0! }
        }
        for (index, reply) in replies.enumerated() {
            #expect(reply.status == 200)
            #expect(try reply.decoded(InferenceResponse.self).outputs[0].data?.values == model.predict(tensors[index]).values, "client \(index)")
        }
        let statistics = served.runner.statistics
        #expect(statistics.requests == 24 && statistics.batches == 3 && statistics.images == 24)

        _ = try await server.get("/v2/models/nothing")
        let scrape = try await server.get("/metrics")
        #expect(scrape.status == 200 && scrape.header("Content-Type")?.hasPrefix("text/plain") == true)
        let samples = Self.samples(String(decoding: scrape.body, as: UTF8.self))
        #expect(samples[#"anvil_requests_total{model="net",route="infer",status="200"}"#] == 24)
        #expect(samples[#"anvil_requests_total{model="",route="metadata",status="404"}"#] == 1)
        #expect(samples[#"anvil_request_duration_seconds_count{model="net"}"#] == 24)
        #expect(samples[#"anvil_batch_size_count{model="net"}"#] == 3)
        #expect(samples[#"anvil_batch_size_sum{model="net"}"#] == 24)
        #expect(samples[#"anvil_batch_size_bucket{model="net",le="4.0"}"#] == 0)
        #expect(samples[#"anvil_batch_size_bucket{model="net",le="8.0"}"#] == 3)
        #expect(samples[#"anvil_queue_depth{model="net"}"#] == 0)
        // The scrape itself is in flight while it is written.
        #expect(samples["anvil_requests_in_flight"] == 1)
        try await server.stop()
    }

    @Test("Queue depth shows requests waiting for a batch")
    func queueDepth() async throws {
        let model = try ServeFixtures.convolutional()
        // No timer flushes the batch within the test: the three stay waiting however slowly
        // they arrive (with a 30 s wait, a loaded machine flushed the first before the third came,
        // and the test waited forever for a queue depth of 3).
        let served = try ServedModel(name: "net", model: model, maximumBatch: 8, maximumWait: .seconds(600))
        let server = try await TestServer([served])
        let tensor = try ServeFixtures.tensor(batch: 1, shape: model.inputShapes[0], seed: 5)
        let waiting = (0 ..< 3).map { _ in
            Task { try await server.infer("net", InferenceRequest(inputs: [ServeFixtures.input(model.inputNames[0], tensor)])) }
        }
        try await refWaitUntil("three requests wait for their batch") { served.runner.statistics.waiting == 3 }
        let samples = Self.samples(String(decoding: try await server.get("/metrics").body, as: UTF8.self))
        #expect(samples[#"anvil_queue_depth{model="net"}"#] == 3)
        // Five more fill the batch of 8: all answered.
        let more = (0 ..< 5).map { _ in
            Task { try await server.infer("net", InferenceRequest(inputs: [ServeFixtures.input(model.inputNames[0], tensor)])) }
        }
        for task in waiting + more { #expect(try await task.value.status == 200) }
        try await server.stop()
    }
}
