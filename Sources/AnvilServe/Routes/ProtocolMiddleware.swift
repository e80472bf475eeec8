import Anvil
import Foundation
import Hummingbird
import Logging

/// Wraps every route: whatever goes wrong becomes the protocol's `{"error": "..."}` with its
/// status, and every request is counted in the metrics and logged in one line.
struct ProtocolMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics
    /// The served models: a metric's `model` label is one of their names, never a client's guess.
    let registry: ModelRegistry

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        metrics.started()
        let (route, model) = Self.classify(request.uri.path, isModel: registry.serves)
        let response: Response
        var failure: String?
        do {
            response = try await next(request, context)
        } catch {
            let (status, message) = Self.statusAndMessage(error)
            failure = message
            response = Self.errorResponse(status, message)
        }
        let duration = ContinuousClock.now - start
        metrics.finished(model: model, route: route, status: response.status.code, duration: duration)
        var metadata: Logger.Metadata = [
            "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
            "ms": "\(String(format: "%.2f", Double(duration.components.attoseconds) * 1e-15 + Double(duration.components.seconds) * 1000))",
        ]
        if !model.isEmpty { metadata["model"] = "\(model)" }
        if let failure { metadata["error"] = "\(failure)" }
        // Probes and scrapes arrive every few seconds: debug, not info.
        let level: Logger.Level = route == "health" || route == "metrics" ? .debug : .info
        context.logger.log(level: level, "request", metadata: metadata)
        return response
    }

    /// The route family of `path` and the served model it names ("" if none).
    static func classify(_ path: String, isModel: (String) -> Bool) -> (route: String, model: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        switch parts.count {
        case 1 where parts[0] == "metrics": return ("metrics", "")
        case 1 where parts[0] == "v2": return ("server", "")
        case 3 where parts[0] == "v2" && parts[1] == "health": return ("health", "")
        case 3 where parts[0] == "v2" && parts[1] == "models" && parts[2] == "stats": return ("stats", "")
        case 2... where parts[0] == "v2" && parts[1] == "repository":
            return ("repository", parts.count == 5 && isModel(parts[3]) ? parts[3] : "")
        case 3... where parts[0] == "v2" && parts[1] == "models":
            let model = isModel(parts[2]) ? parts[2] : ""
            switch parts.count {
            case 3: return ("metadata", model)
            case 4 where parts[3] == "ready": return ("ready", model)
            case 4 where parts[3] == "infer": return ("infer", model)
            case 4 where parts[3] == "config": return ("config", model)
            case 4 where parts[3] == "stats": return ("stats", model)
            default: return ("other", model)
            }
        default: return ("other", "")
        }
    }

    /// The status and message for an error a route threw.
    static func statusAndMessage(_ error: any Error) -> (HTTPResponse.Status, String) {
        switch error {
        case let error as ProtocolError: return (error.status, error.message)
        case let error as HTTPError:
            return (error.status, error.body ?? (error.status == .notFound ? "no such path" : error.status.reasonPhrase))
        case is CancellationError: return (.serviceUnavailable, "the request was cancelled")
        case let error as AnvilError: return (.internalServerError, "inference failed: \(error.message)")
        default: return (.internalServerError, "internal error: \(error)")
        }
    }

    /// The protocol's error response.
    static func errorResponse(_ status: HTTPResponse.Status, _ message: String) -> Response {
        let body = (try? JSONEncoder().encode(ErrorResponse(error: message))) ?? Data(#"{"error":"internal error"}"#.utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
