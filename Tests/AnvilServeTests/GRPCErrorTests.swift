import Anvil
@testable import AnvilServe
@testable import AnvilTestSupport
import Foundation
import GRPCCore
import Testing

/// Whatever a gRPC client sends wrong gets the gRPC status the protocol gives it, with a message
/// naming what is wrong, and the server goes on serving: a good request is checked after every
/// bad one, on the same connection and, after a connection is dropped, on a new one.
@Suite("Serving: gRPC bad requests")
struct GRPCErrorTests {
    /// The good request sent after each bad one, and the model's own answer to it.
    struct Probe {
        let model: Model
        let tensor: Tensor
        let expected: [Float]

        init(_ model: Model) throws {
            self.model = model
            tensor = try ServeFixtures.tensor(batch: 1, shape: model.inputShapes[0], seed: 78)
            expected = try model.predict(tensor).values
        }

        var request: Inference_ModelInferRequest {
            GRPCTestClient.inferRequest("net", input: model.inputNames[0], shape: [1] + tensor.shape.dimensions, values: tensor.values, raw: true)
        }

        /// Sends the good request; expects the model's own answer.
        func check(_ inference: Inference_GRPCInferenceService.Client<some ClientTransport>, after what: String) async throws {
            let response = try await inference.modelInfer(request, options: GRPCTestClient.options)
            #expect(GRPCTestClient.floats(response.rawOutputContents.first ?? Data()) == expected, "not serving after \(what)")
        }
    }

    @Test("Mismatched requests: INVALID_ARGUMENT or NOT_FOUND naming the field, input, shape or datatype")
    func badRequests() async throws {
        let model = try ServeFixtures.convolutional()
        let server = try await TestServer([try ServedModel(name: "net", model: model)], grpc: true)
        let probe = try Probe(model)
        let name = model.inputNames[0]
        let values = probe.tensor.values
        let shape = [1] + probe.tensor.shape.dimensions
        func request(_ change: (inout Inference_ModelInferRequest) -> Void) -> Inference_ModelInferRequest {
            var request = GRPCTestClient.inferRequest("net", input: name, shape: shape, values: values, raw: false)
            change(&request)
            return request
        }
        let cases: [(String, Inference_ModelInferRequest, RPCError.Code, String)] = [
            ("unknown model", request { $0.modelName = "resnet" }, .notFound, "unknown model 'resnet'"),
            ("a version", request { $0.modelVersion = "2" }, .notFound, "no version '2'"),
            ("datatype", request { $0.inputs[0].datatype = "INT32"; $0.inputs[0].contents = .with { $0.intContents = [1] } }, .invalidArgument, "datatype 'INT32'"),
            ("FP32 in int_contents", request { $0.inputs[0].contents = .with { $0.intContents = [1, 2] } }, .invalidArgument, "contents.int_contents"),
            ("wrong shape", request { $0.inputs[0].shape = [1, 12, 10, 3] }, .invalidArgument, "[N, 10, 12, 3]"),
            ("negative dimension", request { $0.inputs[0].shape = [-1, 10, 12, 3] }, .invalidArgument, "at least 1"),
            ("too few values", request { $0.inputs[0].contents = .with { $0.fp32Contents = [1, 2] } }, .invalidArgument, "holds 2"),
            ("no values", request { $0.inputs[0].clearContents() }, .invalidArgument, "no values"),
            ("raw of the wrong size", request { $0.inputs[0].clearContents(); $0.rawInputContents = [Data(count: 8)] }, .invalidArgument, "raw_input_contents[0] holds 8 bytes"),
            ("raw and contents", request { $0.rawInputContents = [Data(count: values.count * 4)] }, .invalidArgument, "both"),
            ("raw entries not one per input", request { $0.inputs[0].clearContents(); $0.rawInputContents = [Data(), Data()] }, .invalidArgument, "2 entries for 1 inputs"),
            ("no inputs", request { $0.inputs = [] }, .invalidArgument, "needs input"),
            ("unknown input", request { $0.inputs[0].name = "pixels" }, .invalidArgument, "no input 'pixels'"),
            ("input twice", request { $0.inputs.append($0.inputs[0]) }, .invalidArgument, "twice"),
            ("unknown output", request { $0.outputs = [.with { $0.name = "logits" }] }, .invalidArgument, "no output 'logits'"),
        ]
        try await GRPCTestClient.run(port: try #require(server.grpcPort)) { inference, client in
            for (what, bad, code, fragment) in cases {
                let error = await GRPCTestClient.error { _ = try await inference.modelInfer(bad, options: GRPCTestClient.options) }
                #expect(error?.code == code, "\(what): \(String(describing: error))")
                #expect(error?.message.contains(fragment) == true, "\(what): \(error?.message ?? "-")")
                try await probe.check(inference, after: what)
            }
            // The other methods name an unknown model the same way.
            #expect(await GRPCTestClient.code { _ = try await inference.modelMetadata(.with { $0.name = "resnet" }, options: GRPCTestClient.options) } == .notFound)
            #expect(await GRPCTestClient.code { _ = try await inference.modelReady(.with { $0.name = "resnet" }, options: GRPCTestClient.options) } == .notFound)
            #expect(await GRPCTestClient.code { _ = try await inference.modelConfig(.with { $0.name = "resnet" }, options: GRPCTestClient.options) } == .notFound)
            #expect(await GRPCTestClient.code { _ = try await inference.modelStatistics(.with { $0.name = "resnet" }, options: GRPCTestClient.options) } == .notFound)
            // Bytes that are not a ModelInferRequest: protobuf cannot read them.
            for (what, bytes) in [("truncated varint", [UInt8](repeating: 0xFF, count: 12)), ("field past the end", [0x2A, 0x7F, 0x01])] {
                #expect(try await GRPCTestClient.sendRaw(bytes, client: client) == .invalidArgument, "\(what)")
                try await probe.check(inference, after: what)
            }
        }
        try await server.stop()
    }

    @Test("A message over the limit: RESOURCE_EXHAUSTED, and the next one is served")
    func overLargeMessage() async throws {
        let model = try ServeFixtures.convolutional()
        // One image (1,440 bytes of values) fits in 4 KiB; four do not.
        let server = try await TestServer([try ServedModel(name: "net", model: model)],
                                          configuration: ServeFixtures.patient(maximumMessageBytes: 4096), grpc: true)
        let probe = try Probe(model)
        let four = try ServeFixtures.tensor(batch: 4, shape: model.inputShapes[0], seed: 79)
        try await GRPCTestClient.run(port: try #require(server.grpcPort)) { inference, _ in
            let large = GRPCTestClient.inferRequest("net", input: model.inputNames[0], shape: [4] + four.shape.dimensions, values: four.values, raw: true)
            let error = await GRPCTestClient.error { _ = try await inference.modelInfer(large, options: GRPCTestClient.options) }
            #expect(error?.code == .resourceExhausted && error?.message.contains("4096") == true, "\(String(describing: error))")
            try await probe.check(inference, after: "an over-large message")
        }
        try await server.stop()
    }

    @Test("A client that hangs up mid-call or mid-frame costs nothing; others keep being served")
    func disconnects() async throws {
        let model = try ServeFixtures.convolutional()
        // A batch of 2 that no timer flushes within the test: the first request waits for its batch.
        let served = try ServedModel(name: "net", model: model, maximumBatch: 2, maximumWait: .seconds(600))
        let server = try await TestServer([served], grpc: true)
        let port = try #require(server.grpcPort)
        let probe = try Probe(model)
        // A whole connection dropped while its call waits for a batch: the call leaves the queue.
        let waiting = Task {
            try await GRPCTestClient.run(port: port) { inference, _ in
                _ = try await inference.modelInfer(probe.request, options: GRPCTestClient.options)
            }
        }
        try await refWaitUntil("the call waits for its batch") { served.runner.statistics.waiting == 1 }
        waiting.cancel()
        _ = await waiting.result
        try await refWaitUntil("the dropped call leaves the queue") { served.runner.statistics.waiting == 0 }
        // A connection that sends half an HTTP/2 frame and hangs up.
        let raw = try RawConnection(port: port)
        raw.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        raw.send(Data([0x00, 0x00, 0x40, 0x01, 0x04, 0x00, 0x00, 0x00, 0x01, 0x83, 0x86]))
        raw.hangUp()
        // A connection that is not HTTP/2 at all.
        let garbage = try RawConnection(port: port)
        garbage.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = await garbage.response()
        // Others are served: two good calls fill a batch of 2 together.
        try await GRPCTestClient.run(port: port) { inference, _ in
            async let first = inference.modelInfer(probe.request, options: GRPCTestClient.options)
            async let second = inference.modelInfer(probe.request, options: GRPCTestClient.options)
            for response in try await [first, second] {
                #expect(GRPCTestClient.floats(response.rawOutputContents[0]) == probe.expected)
            }
        }
        #expect(served.statistics.snapshot.failure.count == 1)
        try await server.stop()
    }

    @Test("While draining: a call in flight is answered, readiness is false, new calls are UNAVAILABLE")
    func draining() async throws {
        let model = try ServeFixtures.convolutional()
        let served = try ServedModel(name: "net", model: model, maximumBatch: 2, maximumWait: .seconds(600))
        let server = try await TestServer([served], grpc: true)
        let probe = try Probe(model)
        let port = try #require(server.grpcPort)
        try await GRPCTestClient.run(port: port) { inference, _ in
            let inFlight = Task { try await inference.modelInfer(probe.request, options: GRPCTestClient.options) }
            try await refWaitUntil("the call waits for its batch") { served.runner.statistics.waiting == 1 }
            let stopping = Task { try await server.stop() }
            try await refWaitUntil("readiness turns false") { !server.server.isReady }
            // A new client's call is refused: by the handler (not ready), or by the transport
            // (GOAWAY, or the port closed). (On the draining connection itself, a call the client
            // sends before it reads the GOAWAY is a protocol error that closes the connection.)
            let refused = await GRPCTestClient.code {
                try await GRPCTestClient.run(port: port) { other, _ in _ = try await other.modelInfer(probe.request, options: GRPCTestClient.options) }
            }
            #expect(refused == .unavailable, "\(String(describing: refused))")
            // The batch's second image comes from inside the process; the call in flight is answered.
            let filler = Task { try await served.runner.prediction(for: probe.tensor) }
            #expect(GRPCTestClient.floats(try await inFlight.value.rawOutputContents[0]) == probe.expected)
            #expect(try await filler.value.values == probe.expected)
            try await stopping.value
        }
    }
}
