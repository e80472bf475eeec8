import Foundation
import GRPCCore
import Logging

/// `inference.GRPCInferenceService`: the KServe v2 gRPC API and Triton's configuration,
/// statistics and repository methods, over the same models, runners, statistics and metrics as
/// the REST routes. Every refusal is a gRPC status with a message naming what is wrong
/// (INVALID_ARGUMENT, NOT_FOUND, UNAVAILABLE while shutting down); messages over the size limit
/// are refused RESOURCE_EXHAUSTED by the transport before they reach a handler.
struct InferenceGRPCService: Inference_GRPCInferenceService.SimpleServiceProtocol {
    /// The served models.
    let registry: ModelRegistry
    let metrics: ServerMetrics
    /// Whether the server takes requests (false once shutting down).
    let isReady: @Sendable () -> Bool
    let logger: Logger

    func serverLive(request: Inference_ServerLiveRequest, context: ServerContext) async throws -> Inference_ServerLiveResponse {
        try await call("ServerLive") { .with { $0.live = true } }
    }

    func serverReady(request: Inference_ServerReadyRequest, context: ServerContext) async throws -> Inference_ServerReadyResponse {
        try await call("ServerReady") { .with { $0.ready = isReady() } }
    }

    func modelReady(request: Inference_ModelReadyRequest, context: ServerContext) async throws -> Inference_ModelReadyResponse {
        try await call("ModelReady", model: request.name) {
            try checkVersion(request.version, of: request.name)
            // A repository model that is not loaded is not ready, rather than unknown.
            if !registry.serves(request.name), registry.index().contains(where: { $0.name == request.name }) {
                return .with { $0.ready = false }
            }
            _ = try registry.require(request.name)
            return .with { $0.ready = isReady() }
        }
    }

    func serverMetadata(request: Inference_ServerMetadataRequest, context: ServerContext) async throws -> Inference_ServerMetadataResponse {
        try await call("ServerMetadata") {
            .with {
                $0.name = "anvil"
                $0.version = InferenceRoutes.serverVersion
                $0.extensions = InferenceRoutes.extensions
            }
        }
    }

    func modelMetadata(request: Inference_ModelMetadataRequest, context: ServerContext) async throws -> Inference_ModelMetadataResponse {
        try await call("ModelMetadata", model: request.name) {
            try checkVersion(request.version, of: request.name)
            let metadata = try registry.require(request.name).metadata
            func tensors(_ list: [TensorMetadata]) -> [Inference_ModelMetadataResponse.TensorMetadata] {
                list.map { tensor in .with { $0.name = tensor.name; $0.datatype = tensor.datatype; $0.shape = tensor.shape.map(Int64.init) } }
            }
            return .with {
                $0.name = metadata.name
                $0.platform = metadata.platform
                $0.inputs = tensors(metadata.inputs)
                $0.outputs = tensors(metadata.outputs)
            }
        }
    }

    func modelInfer(request: Inference_ModelInferRequest, context: ServerContext) async throws -> Inference_ModelInferResponse {
        let started = ContinuousClock.now
        return try await call("ModelInfer", model: request.modelName) {
            try checkVersion(request.modelVersion, of: request.modelName)
            let model = try registry.require(request.modelName)
            guard isReady() else { throw ProtocolError(.serviceUnavailable, "the server is shutting down") }
            let work = Task {
                try await model.infer(started: started, decode: {
                    (try GRPCInferenceMapping.inputs(of: request), try model.outputIndices(request.outputs.isEmpty ? nil : request.outputs.map(\.name)))
                }, encode: { outputs in
                    GRPCInferenceMapping.response(modelName: model.name, id: request.id, outputs: outputs, raw: !request.rawInputContents.isEmpty)
                })
            }
            // gRPC does not cancel a handler's task when its client hangs up, its deadline passes
            // or the server drains: it calls this handler. A request still waiting for its batch
            // then leaves the queue, except while draining (readiness false), when requests in
            // flight are answered.
            return try await withTaskCancellationHandler {
                try await withRPCCancellationHandler {
                    try await work.value
                } onCancelRPC: {
                    if isReady() { work.cancel() }
                }
            } onCancel: {
                work.cancel()
            }
        }
    }

    func modelConfig(request: Inference_ModelConfigRequest, context: ServerContext) async throws -> Inference_ModelConfigResponse {
        try await call("ModelConfig", model: request.name) {
            try checkVersion(request.version, of: request.name)
            let configuration = try registry.require(request.name).configuration
            return .with { $0.config = GRPCExtensionMapping.config(configuration) }
        }
    }

    func modelStatistics(request: Inference_ModelStatisticsRequest, context: ServerContext) async throws -> Inference_ModelStatisticsResponse {
        try await call("ModelStatistics", model: request.name) {
            try checkVersion(request.version, of: request.name)
            // An empty name asks for every model.
            let models = request.name.isEmpty ? registry.models : [try registry.require(request.name)]
            return .with { $0.modelStats = models.map { GRPCExtensionMapping.statistics($0.statisticsEntry) } }
        }
    }

    func repositoryIndex(request: Inference_RepositoryIndexRequest, context: ServerContext) async throws -> Inference_RepositoryIndexResponse {
        try await call("RepositoryIndex") {
            .with {
                $0.models = registry.index(readyOnly: request.ready).map { entry in
                    .with { $0.name = entry.name; $0.state = entry.state; $0.reason = entry.reason }
                }
            }
        }
    }

    func repositoryModelLoad(request: Inference_RepositoryModelLoadRequest, context: ServerContext) async throws -> Inference_RepositoryModelLoadResponse {
        try await call("RepositoryModelLoad", model: request.modelName) {
            if let refused = request.parameters.keys.sorted().first(where: { $0 == "config" || $0.hasPrefix("file:") }) {
                throw ProtocolError.badRequest("load parameter '\(refused)' is not supported: Anvil loads the model's folder as it is")
            }
            try await registry.load(request.modelName)
            return Inference_RepositoryModelLoadResponse()
        }
    }

    func repositoryModelUnload(request: Inference_RepositoryModelUnloadRequest, context: ServerContext) async throws -> Inference_RepositoryModelUnloadResponse {
        try await call("RepositoryModelUnload", model: request.modelName) {
            try registry.unload(request.modelName)
            return Inference_RepositoryModelUnloadResponse()
        }
    }

    /// Anvil models are unversioned: the version must be empty (any version).
    private func checkVersion(_ version: String, of model: String) throws {
        guard version.isEmpty else {
            throw ProtocolError(.notFound, "model '\(model)' has no version '\(version)'; Anvil models are unversioned (leave the version empty)")
        }
    }

    /// Runs one call's handler: counts it in the metrics, logs it, and turns what it threw into
    /// a gRPC status.
    private func call<Response>(_ method: String, model: String = "", _ body: () async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        metrics.started()
        var failure: RPCError?
        defer {
            let duration = ContinuousClock.now - start
            // A metric's model label is a served model's name, never a client's guess.
            let label = registry.serves(model) ? model : ""
            let code = RPCError.name(of: failure?.code)
            metrics.finishedCall(model: label, method: method, code: code, duration: duration)
            var metadata: Logger.Metadata = ["grpc": "\(method)", "code": "\(code)",
                                             "ms": "\(String(format: "%.2f", Double(duration.components.attoseconds) * 1e-15 + Double(duration.components.seconds) * 1000))"]
            if !label.isEmpty { metadata["model"] = "\(label)" }
            if let failure { metadata["error"] = "\(failure.message)" }
            // Probes arrive every few seconds: debug, not info.
            logger.log(level: method.hasPrefix("Server") ? .debug : .info, "request", metadata: metadata)
        }
        do {
            return try await body()
        } catch {
            let rpcError = RPCError.from(error)
            failure = rpcError
            throw rpcError
        }
    }
}
