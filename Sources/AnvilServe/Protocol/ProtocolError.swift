import HTTPTypes

/// A request the server refuses, with the status and the message of the protocol's error
/// response (`{"error": "message"}`): what is wrong and where — the model, input, field or shape.
public struct ProtocolError: Error, CustomStringConvertible, Sendable {
    /// The HTTP status: 400 malformed or mismatched request, 404 unknown model or path, 408 a body
    /// that stalled, 413 a body over the limit, 503 not ready, 500 a failure of the server itself.
    public let status: HTTPResponse.Status
    /// What went wrong.
    public let message: String

    /// An error with this status and message.
    public init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// A 400 Bad Request.
    static func badRequest(_ message: String) -> ProtocolError { ProtocolError(.badRequest, message) }

    /// The message.
    public var description: String { message }
}
