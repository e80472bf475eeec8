import Anvil
@testable import AnvilServe
@testable import AnvilTestSupport
import Foundation
import Testing

/// Health, metadata and JSON inference over real HTTP, each answer compared with the model's own
/// `predict` on the same input.
@Suite("Serving: the KServe v2 protocol")
struct ProtocolTests {
    @Test("Health, server metadata, model metadata and readiness")
    func healthAndMetadata() async throws {
        let mnist = try ServedModel(name: "mnist", model: ServeFixtures.mnist())
        let open = try ServedModel(name: "segmenter", model: ServeFixtures.convolutional(open: true))
        let server = try await TestServer([mnist, open])
        let live = try await server.get("/v2/health/live")
        #expect(live.status == 200)
        #expect(try live.decoded(HealthResponse.self) == HealthResponse(live: true))
        let ready = try await server.get("/v2/health/ready")
        #expect(ready.status == 200)
        #expect(try ready.decoded(HealthResponse.self) == HealthResponse(ready: true))
        let metadata = try await server.get("/v2")
        let serverMetadata = try metadata.decoded(ServerMetadata.self)
        #expect(serverMetadata.name == "anvil" && serverMetadata.extensions == ["binary_tensor_data", "model_configuration", "statistics", "model_repository"])

        let model = try (try await server.get("/v2/models/mnist")).decoded(ModelMetadata.self)
        #expect(model.name == "mnist" && model.platform == "anvil")
        #expect(model.inputs == [TensorMetadata(name: "image", datatype: "FP32", shape: [-1, 28, 28, 1], parameters: ["layout": "NHWC"])])
        #expect(model.outputs == [TensorMetadata(name: "probabilities", datatype: "FP32", shape: [-1, 10])])
        // Open height and width are -1, as the batch.
        let segmenter = try (try await server.get("/v2/models/segmenter")).decoded(ModelMetadata.self)
        #expect(segmenter.inputs.map(\.shape) == [[-1, -1, -1, 3]] && segmenter.outputs.map(\.shape) == [[-1, -1, -1, 6]])

        let modelReady = try await server.get("/v2/models/segmenter/ready")
        #expect(modelReady.status == 200)
        #expect(try modelReady.decoded(ModelReadyResponse.self) == ModelReadyResponse(name: "segmenter", ready: true))
        try await server.stop()
    }

    @Test("JSON inference on the trained MNIST network: the outputs of predict, bit for bit, with the id echoed")
    func mnistInference() async throws {
        let model = try ServeFixtures.mnist()
        let server = try await TestServer([try ServedModel(name: "mnist", model: model, maximumBatch: 1)])
        let images = try Fixtures.floats(Fixtures.repository.appendingPathComponent("Weights/mnist/sample-digits.f32"))
        for batch in [1, 3] {
            let tensor = try Tensor(batch: batch, shape: Shape(height: 28, width: 28, channels: 1), values: Array(images[0 ..< batch * 784]))
            let reply = try await server.infer("mnist", InferenceRequest(id: "request-\(batch)", inputs: [ServeFixtures.input("image", tensor)]))
            #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
            #expect(reply.header("Content-Type") == "application/json")
            let response = try reply.decoded(InferenceResponse.self)
            let expected = try model.predict(tensor)
            #expect(response.modelName == "mnist" && response.id == "request-\(batch)")
            #expect(response.outputs.map(\.name) == ["probabilities"] && response.outputs[0].shape == [batch, 10])
            #expect(response.outputs[0].datatype == "FP32" && response.outputs[0].data?.values == expected.values)
            // The shipped sample digits are 7 2 1.
            #expect(Array(expected.argmax().prefix(3)) == Array([7, 2, 1].prefix(batch)))
        }
        try await server.stop()
    }

    @Test("Nested data (row-major per the shape) gives what flat data gives; open sizes take any size")
    func nestedData() async throws {
        let model = try ServeFixtures.convolutional(open: true)
        let server = try await TestServer([try ServedModel(name: "net", model: model)])
        let tensor = try ServeFixtures.tensor(batch: 2, shape: Shape(height: 6, width: 8, channels: 3), seed: 5)
        // [2][6][8][3] as nested JSON arrays.
        var nested: [[[[Float]]]] = []
        for n in 0 ..< 2 {
            nested.append((0 ..< 6).map { y in (0 ..< 8).map { x in (0 ..< 3).map { c in tensor.values[((n * 6 + y) * 8 + x) * 3 + c] } } })
        }
        let body = try JSONSerialization.data(withJSONObject: [
            "inputs": [["name": model.inputNames[0], "shape": [2, 6, 8, 3], "datatype": "FP32", "data": nested]],
        ])
        let reply = try await server.post("/v2/models/net/infer", body: body)
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        let response = try reply.decoded(InferenceResponse.self)
        let expected = try model.predict(tensor)
        #expect(response.outputs[0].shape == [2] + expected.shape.dimensions)
        #expect(response.outputs[0].data?.values == expected.values)
        try await server.stop()
    }

    @Test("Several inputs by name in any order; outputs chosen by name")
    func namedInputsAndOutputs() async throws {
        let model = try ServeFixtures.twoInputs()
        let server = try await TestServer([try ServedModel(name: "two", model: model)])
        let image = try ServeFixtures.tensor(batch: 2, shape: model.inputShapes[0], seed: 7)
        let extra = try ServeFixtures.tensor(batch: 2, shape: model.inputShapes[1], seed: 8)
        let expected = try model.predict([image, extra])
        let request = InferenceRequest(inputs: [ServeFixtures.input("extra", extra), ServeFixtures.input("image", image)],
                                       outputs: [RequestedOutput(name: model.outputNames[1])])
        let reply = try await server.infer("two", request)
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        let response = try reply.decoded(InferenceResponse.self)
        #expect(response.outputs.map(\.name) == [model.outputNames[1]])
        #expect(response.outputs[0].data?.values == expected[1].values)
        let all = try (try await server.infer("two", InferenceRequest(inputs: request.inputs))).decoded(InferenceResponse.self)
        #expect(all.outputs.map(\.name) == model.outputNames)
        #expect(all.outputs.map { $0.data?.values ?? [] } == expected.map(\.values))
        try await server.stop()
    }

    @Test("A channels-first model (as an .onnx file declares) takes and returns NCHW on the wire")
    func channelsFirst() async throws {
        let model = try ServeFixtures.convolutional()
        let server = try await TestServer([try ServedModel(name: "nchw", model: model, layout: .channelsFirst)])
        let metadata = try (try await server.get("/v2/models/nchw")).decoded(ModelMetadata.self)
        #expect(metadata.inputs[0].shape == [-1, 3, 10, 12] && metadata.inputs[0].parameters == ["layout": "NCHW"])
        #expect(metadata.outputs[0].shape == [-1, 6, 5, 6])
        let tensor = try ServeFixtures.tensor(batch: 2, shape: model.inputShapes[0], seed: 9)
        // NHWC → NCHW by index, independently of the server's transposition.
        func toChannelsFirst(_ t: Tensor) -> [Float] {
            let (h, w, c) = (t.shape.height, t.shape.width, t.shape.channels)
            var out = [Float](repeating: .nan, count: t.values.count)
            for n in 0 ..< t.batch { for y in 0 ..< h { for x in 0 ..< w { for k in 0 ..< c {
                out[((n * c + k) * h + y) * w + x] = t.values[((n * h + y) * w + x) * c + k]
            } } } }
            return out
        }
        let request = InferenceRequest(inputs: [InputTensor(name: model.inputNames[0], shape: [2, 3, 10, 12], data: TensorData(toChannelsFirst(tensor)))])
        let reply = try await server.infer("nchw", request)
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        let output = try reply.decoded(InferenceResponse.self).outputs[0]
        let expected = try model.predict(tensor)
        #expect(output.shape == [2, 6, 5, 6])
        #expect(output.data?.values == toChannelsFirst(expected))
        // Its NHWC shape is refused, naming the layout.
        let wrong = try await server.infer("nchw", InferenceRequest(inputs: [ServeFixtures.input(model.inputNames[0], tensor)]))
        #expect(wrong.status == 400 && wrong.errorMessage?.contains("NCHW") == true)
        try await server.stop()
    }
}
