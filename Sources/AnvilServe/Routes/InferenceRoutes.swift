import Foundation
import HTTPTypes
import Hummingbird

/// The KServe Open Inference Protocol v2 REST routes, plus `/metrics`.
struct InferenceRoutes: Sendable {
    /// The served models, by name.
    let models: [String: ServedModel]
    let metrics: ServerMetrics
    let bodyReader: BodyReader
    /// Whether the server takes requests (false once shutting down).
    let isReady: @Sendable () -> Bool
    /// The version `GET /v2` reports.
    static let serverVersion = "0.1.0"

    /// A router with every route and the error/metrics/log middleware.
    func router() -> Router<ServeRequestContext> {
        let router = Router(context: ServeRequestContext.self)
        router.middlewares.add(ProtocolMiddleware<ServeRequestContext>(metrics: metrics, modelNames: Set(models.keys)))
        router.get("/v2/health/live") { _, _ in try Self.json(HealthResponse(live: true)) }
        router.get("/v2/health/ready") { _, _ in
            let ready = isReady()
            return try Self.json(HealthResponse(ready: ready), status: ready ? .ok : .serviceUnavailable)
        }
        router.get("/v2") { _, _ in
            try Self.json(ServerMetadata(name: "anvil", version: Self.serverVersion, extensions: ["binary_tensor_data"]))
        }
        router.get("/v2/models/:name") { _, context in try Self.json(model(context).metadata) }
        router.get("/v2/models/:name/ready") { _, context in
            let ready = isReady()
            return try Self.json(ModelReadyResponse(name: try model(context).name, ready: ready), status: ready ? .ok : .serviceUnavailable)
        }
        router.post("/v2/models/:name/infer") { request, context in try await infer(request, context: context) }
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        return router
    }

    /// The model the path names; 404 for an unknown one.
    private func model(_ context: ServeRequestContext) throws -> ServedModel {
        let name = context.parameters.get("name") ?? ""
        guard let model = models[name] else {
            throw ProtocolError(.notFound, "unknown model '\(name)'; this server has \(models.keys.sorted().map { "'\($0)'" }.joined(separator: ", "))")
        }
        return model
    }

    /// `POST /v2/models/{name}/infer`.
    private func infer(_ request: Request, context: ServeRequestContext) async throws -> Response {
        let model = try model(context)
        guard isReady() else { throw ProtocolError(.serviceUnavailable, "the server is shutting down") }
        let body = try await bodyReader.read(request, channel: context.channel)
        let headerLength = request.headers[HTTPField.Name(BinaryTensorData.headerLengthField)!]
        let (json, binary) = try BinaryTensorData.split(body, headerLength: headerLength)
        let answer = try await model.infer(json: json, binary: binary)
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
