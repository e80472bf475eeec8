import Anvil
@testable import AnvilServe
@testable import AnvilTestSupport
import Foundation
import Testing

/// A graceful shutdown: readiness turns false, a request in flight is still answered, and the
/// server stops listening.
@Suite("Serving: graceful shutdown")
struct ShutdownTests {
    @Test("A request waiting for its batch is answered after shutdown begins; then the port is closed")
    func inFlightFinishes() async throws {
        let model = try ServeFixtures.convolutional()
        // A batch of 2 that no timer flushes within the test: the request is surely still
        // waiting when the shutdown begins, however long the machine takes to get there (with a
        // short wait, a loaded machine could flush it before the test saw it waiting, and the
        // test then waited forever for a queue that stayed empty).
        let served = try ServedModel(name: "net", model: model, maximumBatch: 2, maximumWait: .seconds(600))
        let server = try await TestServer([served])
        #expect(server.server.isReady)
        let tensor = try ServeFixtures.tensor(batch: 1, shape: model.inputShapes[0], seed: 61)
        let inFlight = Task { try await server.infer("net", InferenceRequest(inputs: [ServeFixtures.input(model.inputNames[0], tensor)])) }
        try await refWaitUntil("the request waits for its batch") { served.runner.statistics.waiting == 1 }
        let stopping = Task { try await server.stop() }
        try await refWaitUntil("readiness turns false") { !server.server.isReady }
        // The listener is closed: the batch's second image comes from inside the process.
        let other = try ServeFixtures.tensor(batch: 1, shape: model.inputShapes[0], seed: 62)
        let filler = Task { try await served.runner.prediction(for: other) }
        let reply = try await inFlight.value
        #expect(reply.status == 200)
        #expect(try reply.decoded(InferenceResponse.self).outputs[0].data?.values == model.predict(tensor).values)
        #expect(try await filler.value == (try model.predict(other)))
        try await stopping.value
        #expect(!server.server.isReady)
        #expect(throws: (any Error).self) { _ = try RawConnection(port: server.port) }
    }

    @Test("Two models of one name, a bad port, a second run: refused")
    func refusedConfigurations() async throws {
        let model = try ServeFixtures.convolutional()
        let a = try ServedModel(name: "net", model: model), b = try ServedModel(name: "net", model: model)
        #expect(throws: AnvilError.self) { _ = try InferenceServer(models: [a, b]) }
        #expect(throws: AnvilError.self) { _ = try InferenceServer(models: [a], configuration: ServeConfiguration(port: 70000)) }
        #expect(throws: AnvilError.self) { _ = try InferenceServer(models: []) }
        #expect(throws: AnvilError.self) { _ = try ServedModel(name: "a/b", model: model) }
        let server = try await TestServer([a])
        await #expect(throws: AnvilError.self) { try await server.server.run(handlingSignals: false) }
        try await server.stop()
    }
}
