import Foundation
import HTTPTypes
import Hummingbird

/// The KServe Open Inference Protocol v2 REST routes, Triton's configuration, statistics and
/// repository extensions, and `/metrics`.
struct InferenceRoutes: Sendable {
    /// The served models.
    let registry: ModelRegistry
    let metrics: ServerMetrics
    let bodyReader: BodyReader
    /// Whether the server takes requests (false once shutting down).
    let isReady: @Sendable () -> Bool
    /// The version `GET /v2` reports.
    static let serverVersion = "0.1.0"

    /// A router with every route and the error/metrics/log middleware.
    func router() -> Router<ServeRequestContext> {
        let router = Router(context: ServeRequestContext.self)
        router.middlewares.add(ProtocolMiddleware<ServeRequestContext>(metrics: metrics, registry: registry))
        router.get("/v2/health/live") { _, _ in try Self.json(HealthResponse(live: true)) }
        router.get("/v2/health/ready") { _, _ in
            let ready = isReady()
            return try Self.json(HealthResponse(ready: ready), status: ready ? .ok : .serviceUnavailable)
        }
        router.get("/v2") { _, _ in
            try Self.json(ServerMetadata(name: "anvil", version: Self.serverVersion, extensions: Self.extensions))
        }
        // Before /v2/models/:name: "stats" is this route, not a model.
        router.get("/v2/models/stats") { _, _ in
            try Self.json(ModelStatisticsResponse(modelStats: registry.models.map(\.statisticsEntry)))
        }
        router.get("/v2/models/:name") { _, context in try Self.json(model(context).metadata) }
        router.get("/v2/models/:name/ready") { _, context in
            let name = context.parameters.get("name") ?? ""
            // A repository model that is not loaded is not ready, rather than unknown.
            if !registry.serves(name), registry.index().contains(where: { $0.name == name }) {
                return try Self.json(ModelReadyResponse(name: name, ready: false), status: .serviceUnavailable)
            }
            let ready = isReady()
            return try Self.json(ModelReadyResponse(name: try model(context).name, ready: ready), status: ready ? .ok : .serviceUnavailable)
        }
        router.get("/v2/models/:name/config") { _, context in try Self.json(model(context).configuration) }
        router.get("/v2/models/:name/stats") { _, context in
            try Self.json(ModelStatisticsResponse(modelStats: [model(context).statisticsEntry]))
        }
        router.post("/v2/repository/index") { request, context in
            let body = try await repositoryRequest(request, context: context)
            return try Self.json(registry.index(readyOnly: body.ready ?? false).map {
                RepositoryIndexEntry(name: $0.name, state: $0.state, reason: $0.reason)
            })
        }
        router.post("/v2/repository/models/:name/load") { request, context in
            let body = try await repositoryRequest(request, context: context)
            if let refused = body.parameters?.keys.sorted().first(where: { $0 == "config" || $0.hasPrefix("file:") }) {
                throw ProtocolError.badRequest("load parameter '\(refused)' is not supported: Anvil loads the model's folder as it is")
            }
            try await registry.load(context.parameters.get("name") ?? "")
            return Response(status: .ok)
        }
        router.post("/v2/repository/models/:name/unload") { request, context in
            _ = try await repositoryRequest(request, context: context)
            try registry.unload(context.parameters.get("name") ?? "")
            return Response(status: .ok)
        }
        router.post("/v2/models/:name/infer") { request, context in try await infer(request, context: context) }
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        return router
    }

    /// The protocol extensions `GET /v2` lists.
    static let extensions = ["binary_tensor_data", "model_configuration", "statistics", "model_repository"]

    /// The model the path names; 404 for an unknown one.
    private func model(_ context: ServeRequestContext) throws -> ServedModel {
        try registry.require(context.parameters.get("name") ?? "")
    }

    /// A repository request's body: empty, or JSON.
    private func repositoryRequest(_ request: Request, context: ServeRequestContext) async throws -> RepositoryRequest {
        let body = try await bodyReader.read(request, channel: context.channel)
        guard !body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else { return RepositoryRequest() }
        do {
            return try JSONDecoder().decode(RepositoryRequest.self, from: body)
        } catch let error as DecodingError {
            throw ProtocolError.badRequest("malformed repository request: \(error.protocolMessage)")
        }
    }

    /// `POST /v2/models/{name}/infer`.
    private func infer(_ request: Request, context: ServeRequestContext) async throws -> Response {
        let started = ContinuousClock.now
        let model = try model(context)
        guard isReady() else { throw ProtocolError(.serviceUnavailable, "the server is shutting down") }
        let body = try await bodyReader.read(request, channel: context.channel)
        let headerLength = request.headers[HTTPField.Name(BinaryTensorData.headerLengthField)!]
        let (json, binary) = try BinaryTensorData.split(body, headerLength: headerLength)
        let answer = try await model.infer(json: json, binary: binary, started: started)
        var headers: HTTPFields = [:]
        if let jsonLength = answer.jsonLength {
            headers[.contentType] = "application/octet-stream"
            headers[HTTPField.Name(BinaryTensorData.headerLengthField)!] = String(jsonLength)
        } else {
            headers[.contentType] = "application/json"
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
    }

    /// A JSON response.
    private static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}
