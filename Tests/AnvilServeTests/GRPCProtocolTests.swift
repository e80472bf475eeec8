import Anvil
@testable import AnvilServe
@testable import AnvilTestSupport
import Foundation
import GRPCCore
import Testing

/// The KServe v2 gRPC API (`inference.GRPCInferenceService`) spoken to with grpc-swift's own
/// client over loopback: every method, answers equal to the model's own `predict` and to what the
/// REST routes answer for the same request, and the configuration and statistics methods.
@Suite("Serving: gRPC")
struct GRPCProtocolTests {
    @Test("Health, metadata and inference (typed and raw tensors, requested outputs) agree with predict and REST")
    func everyMethod() async throws {
        let model = try ServeFixtures.convolutional()
        let two = try ServeFixtures.twoInputs()
        let server = try await TestServer([try ServedModel(name: "net", model: model), try ServedModel(name: "two", model: two)], grpc: true)
        let tensor = try ServeFixtures.tensor(batch: 2, shape: model.inputShapes[0], seed: 90)
        let expected = try model.predict(tensor)
        let restReply = try await server.infer("net", InferenceRequest(inputs: [ServeFixtures.input(model.inputNames[0], tensor)]))
        let rest = try restReply.decoded(InferenceResponse.self)
        let restMetadata = try await server.get("/v2/models/net").decoded(ModelMetadata.self)
        let restServer = try await server.get("/v2").decoded(ServerMetadata.self)
        try await GRPCTestClient.run(port: try #require(server.grpcPort)) { inference, _ in
            let options = GRPCTestClient.options
            #expect(try await inference.serverLive(Inference_ServerLiveRequest(), options: options).live)
            #expect(try await inference.serverReady(Inference_ServerReadyRequest(), options: options).ready)
            #expect(try await inference.modelReady(.with { $0.name = "net" }, options: options).ready)
            let serverMetadata = try await inference.serverMetadata(Inference_ServerMetadataRequest(), options: options)
            #expect(serverMetadata.name == restServer.name && serverMetadata.version == restServer.version)
            #expect(serverMetadata.extensions == restServer.extensions)
            let metadata = try await inference.modelMetadata(.with { $0.name = "net" }, options: options)
            #expect(metadata.name == "net" && metadata.platform == restMetadata.platform)
            #expect(metadata.inputs.map(\.name) == restMetadata.inputs.map(\.name))
            #expect(metadata.inputs.map { $0.shape.map(Int.init) } == restMetadata.inputs.map(\.shape))
            #expect(metadata.outputs.map { $0.shape.map(Int.init) } == restMetadata.outputs.map(\.shape))
            #expect(metadata.inputs.allSatisfy { $0.datatype == "FP32" })

            // The same request in both of gRPC's forms, answered in the same form: the model's own
            // bits, and REST's.
            for raw in [false, true] {
                let request = GRPCTestClient.inferRequest("net", input: model.inputNames[0], shape: [2] + tensor.shape.dimensions,
                                                          values: tensor.values, raw: raw, id: "request-\(raw)")
                let response = try await inference.modelInfer(request, options: options)
                #expect(response.modelName == "net" && response.id == "request-\(raw)")
                #expect(response.outputs.map(\.name) == model.outputNames)
                #expect(response.outputs[0].datatype == "FP32")
                #expect(response.outputs[0].shape.map(Int.init) == [2] + expected.shape.dimensions)
                #expect(response.rawOutputContents.count == (raw ? 1 : 0))
                let values = raw ? GRPCTestClient.floats(response.rawOutputContents[0]) : response.outputs[0].contents.fp32Contents
                #expect(values == expected.values, "raw: \(raw)")
                #expect(values == rest.outputs[0].data?.values, "raw: \(raw)")
            }

            // Two inputs given in the other order, only the second output asked for.
            let image = try ServeFixtures.tensor(batch: 1, shape: two.inputShapes[0], seed: 91)
            let extra = try ServeFixtures.tensor(batch: 1, shape: two.inputShapes[1], seed: 92)
            let outputs = try two.predict([image, extra])
            var request = Inference_ModelInferRequest()
            request.modelName = "two"
            request.inputs = [(two.inputNames[1], extra), (two.inputNames[0], image)].map { name, tensor in
                .with {
                    $0.name = name
                    $0.datatype = "FP32"
                    $0.shape = ([1] + tensor.shape.dimensions).map(Int64.init)
                    $0.contents = .with { $0.fp32Contents = tensor.values }
                }
            }
            request.outputs = [.with { $0.name = two.outputNames[1] }]
            let response = try await inference.modelInfer(request, options: options)
            #expect(response.outputs.map(\.name) == [two.outputNames[1]])
            #expect(response.outputs[0].contents.fp32Contents == outputs[1].values)
        }
        try await server.stop()
    }

    @Test("Model configuration and statistics over gRPC match REST's and count what was sent")
    func configurationAndStatistics() async throws {
        let model = try ServeFixtures.convolutional()
        let served = try ServedModel(name: "net", model: model, maximumBatch: 4, maximumWait: .milliseconds(3))
        let server = try await TestServer([served], grpc: true)
        let tensor = try ServeFixtures.tensor(batch: 3, shape: model.inputShapes[0], seed: 93)
        try await GRPCTestClient.run(port: try #require(server.grpcPort)) { inference, _ in
            let options = GRPCTestClient.options
            let config = try await inference.modelConfig(.with { $0.name = "net" }, options: options).config
            #expect(config.name == "net" && config.platform == "anvil" && config.maxBatchSize == 4)
            #expect(config.input.map(\.name) == model.inputNames && config.output.map(\.name) == model.outputNames)
            #expect(config.input[0].dims.map(Int.init) == model.inputShapes[0].dimensions)
            #expect(config.input[0].dataType == .typeFp32 && config.input[0].format == .nhwc)
            #expect(config.output[0].dims.map(Int.init) == model.outputShapes[0].dimensions)
            #expect(config.dynamicBatching.preferredBatchSize == [4] && config.dynamicBatching.maxQueueDelayMicroseconds == 3000)
            let restConfig = try await server.get("/v2/models/net/config").decoded(ModelConfiguration.self)
            #expect(restConfig.maxBatchSize == 4 && restConfig.input[0].dims == config.input[0].dims.map(Int.init))
            #expect(restConfig.dynamicBatching == DynamicBatchingConfiguration(preferredBatchSize: [4], maxQueueDelayMicroseconds: 3000))

            // Five good requests of 3 images (two over gRPC, three over REST), one bad one.
            for raw in [false, true] {
                _ = try await inference.modelInfer(GRPCTestClient.inferRequest("net", input: model.inputNames[0], shape: [3] + tensor.shape.dimensions,
                                                                               values: tensor.values, raw: raw), options: options)
            }
            for _ in 0 ..< 3 {
                #expect(try await server.infer("net", InferenceRequest(inputs: [ServeFixtures.input(model.inputNames[0], tensor)])).status == 200)
            }
            let bad = GRPCTestClient.inferRequest("net", input: model.inputNames[0], shape: [1, 2], values: [1, 2], raw: false)
            #expect(await GRPCTestClient.code { _ = try await inference.modelInfer(bad, options: options) } == .invalidArgument)

            let statistics = try await inference.modelStatistics(.with { $0.name = "net" }, options: options).modelStats
            #expect(statistics.count == 1)
            let entry = try #require(statistics.first)
            let stats = entry.inferenceStats
            #expect(entry.name == "net" && entry.inferenceCount == 15 && entry.executionCount == UInt64(served.runner.statistics.batches))
            #expect(stats.success.count == 5 && stats.fail.count == 1)
            #expect([stats.queue.count, stats.computeInput.count, stats.computeInfer.count, stats.computeOutput.count] == [5, 5, 5, 5])
            // The parts of a request's time add up to no more than its whole.
            #expect(stats.computeInfer.ns > 0 && stats.queue.ns + stats.computeInput.ns + stats.computeInfer.ns + stats.computeOutput.ns <= stats.success.ns)
            #expect(entry.lastInference > 0)
            // REST reports the same totals (nothing was sent in between).
            let rest = try await server.get("/v2/models/net/stats").decoded(ModelStatisticsResponse.self).modelStats
            #expect(rest.count == 1 && rest[0].inferenceCount == 15 && rest[0].inferenceStats["success"] == StatisticDuration(count: 5, ns: stats.success.ns))
            #expect(rest[0].inferenceStats["fail"]?.count == 1 && rest[0].executionCount == entry.executionCount)
            // An empty name: every model.
            #expect(try await inference.modelStatistics(Inference_ModelStatisticsRequest(), options: options).modelStats.map(\.name) == ["net"])
            #expect(try await server.get("/v2/models/stats").decoded(ModelStatisticsResponse.self).modelStats.map(\.name) == ["net"])
        }
        // gRPC calls are counted in the metrics beside REST's.
        let samples = BatchingAndMetricsTests.samples(String(decoding: try await server.get("/metrics").body, as: UTF8.self))
        #expect(samples[#"anvil_grpc_requests_total{model="net",method="ModelInfer",code="OK"}"#] == 2)
        #expect(samples[#"anvil_grpc_requests_total{model="net",method="ModelInfer",code="INVALID_ARGUMENT"}"#] == 1)
        #expect(samples[#"anvil_request_duration_seconds_count{model="net"}"#] == 6)
        try await server.stop()
    }

    @Test("The model repository: index, unload and load again over gRPC and REST, without restarting")
    func repository() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-repository-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("digits"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let weights = Fixtures.repository.appendingPathComponent("Weights/mnist")
        for file in try FileManager.default.contentsOfDirectory(atPath: weights.path) {
            try FileManager.default.copyItem(at: weights.appendingPathComponent(file), to: folder.appendingPathComponent("digits/\(file)"))
        }
        // A folder without a model file is not a model.
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("notes"), withIntermediateDirectories: true)
        let model = try ServeFixtures.mnist()
        let image = try ServeFixtures.tensor(batch: 1, shape: model.inputShapes[0], seed: 94)
        let expected = try model.predict(image).values
        let repository = try ModelRepository(directory: folder, maximumBatch: 4)
        let server = try await TestServer([try ServedModel(name: "net", model: try ServeFixtures.convolutional())], grpc: true, repository: repository)
        try await GRPCTestClient.run(port: try #require(server.grpcPort)) { inference, _ in
            let options = GRPCTestClient.options
            func index() async throws -> [String] {
                try await inference.repositoryIndex(Inference_RepositoryIndexRequest(), options: options).models.map { "\($0.name):\($0.state):\($0.reason)" }
            }
            func infer() async throws -> Inference_ModelInferResponse {
                try await inference.modelInfer(GRPCTestClient.inferRequest("digits", input: "image", shape: [1, 28, 28, 1], values: image.values, raw: true), options: options)
            }
            #expect(try await index() == ["digits:READY:", "net:READY:"])
            #expect(GRPCTestClient.floats(try await infer().rawOutputContents[0]) == expected)
            _ = try await inference.repositoryModelUnload(.with { $0.modelName = "digits" }, options: options)
            #expect(try await index() == ["digits:UNAVAILABLE:unloaded", "net:READY:"])
            #expect(try await inference.repositoryIndex(.with { $0.ready = true }, options: options).models.map(\.name) == ["net"])
            #expect(try await inference.modelReady(.with { $0.name = "digits" }, options: options).ready == false)
            #expect(await GRPCTestClient.code { _ = try await infer() } == .notFound)
            #expect(try await server.get("/v2/models/digits").status == 404)
            _ = try await inference.repositoryModelLoad(.with { $0.modelName = "digits" }, options: options)
            #expect(GRPCTestClient.floats(try await infer().rawOutputContents[0]) == expected)
            // REST's side of the extension.
            #expect(try await server.post("/v2/repository/models/digits/unload", body: Data()).status == 200)
            let restIndex = try await server.post("/v2/repository/index", body: Data("{}".utf8)).decoded([RepositoryIndexEntry].self)
            #expect(restIndex == [RepositoryIndexEntry(name: "digits", state: "UNAVAILABLE", reason: "unloaded"),
                                  RepositoryIndexEntry(name: "net", state: "READY", reason: "")])
            #expect(try await server.post("/v2/repository/models/digits/load", body: Data()).status == 200)
            #expect(try await server.get("/v2/models/digits/ready").status == 200)
            // What the repository cannot do: the protocol's errors.
            #expect(await GRPCTestClient.code { _ = try await inference.repositoryModelLoad(.with { $0.modelName = "nothing" }, options: options) } == .notFound)
            #expect(await GRPCTestClient.code { _ = try await inference.repositoryModelLoad(.with { $0.modelName = "../digits" }, options: options) } == .notFound)
            #expect(await GRPCTestClient.code { _ = try await inference.repositoryModelUnload(.with { $0.modelName = "nothing" }, options: options) } == .notFound)
            let override = try await server.post("/v2/repository/models/digits/load", body: Data(#"{"parameters": {"config": "{}"}}"#.utf8))
            #expect(override.status == 400 && override.errorMessage?.contains("'config'") == true)
            #expect(try await server.post("/v2/repository/models/nothing/load", body: Data()).status == 404)
            #expect(try await server.post("/v2/repository/index", body: Data("{".utf8)).status == 400)
            #expect(GRPCTestClient.floats(try await infer().rawOutputContents[0]) == expected)
        }
        try await server.stop()

        // Without a repository, loading and unloading are refused; the index lists what is served.
        let plain = try await TestServer([try ServedModel(name: "net", model: try ServeFixtures.convolutional())], grpc: true)
        try await GRPCTestClient.run(port: try #require(plain.grpcPort)) { inference, _ in
            let load = await GRPCTestClient.error { _ = try await inference.repositoryModelLoad(.with { $0.modelName = "net" }, options: GRPCTestClient.options) }
            #expect(load?.code == .invalidArgument && load?.message.contains("--model-repository") == true)
            let index = try await inference.repositoryIndex(Inference_RepositoryIndexRequest(), options: GRPCTestClient.options)
            #expect(index.models.map(\.name) == ["net"])
        }
        #expect(try await plain.post("/v2/repository/models/net/unload", body: Data()).status == 400)
        try await plain.stop()
    }
}
